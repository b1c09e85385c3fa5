/**
 * The chaos suite against the real `AIChatAgent` (see RELIABILITY.md). Inside
 * `npm test` it runs a few trials of each scenario; `npm run test:chaos`
 * (CHAOS_FULL=1) runs the full counts and prints the figures table. Every
 * trial draws from the run's seed (`SEED=` replays it).
 */
import { AgentClient } from "agents/client";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commands } from "vitest/browser";
import { expectedText } from "../fixtures/worker/src/script";
import {
  Figures,
  NO_FAILURES,
  audit,
  chaosSettings,
  instrumentPage,
  rng,
  scenarioSeed,
  settle,
  textParts,
  until,
  type ChaosSettings,
  type Rng
} from "../support/chaos";
import { indexedDBPersistence, indexedDBStore } from "../../src/persist";
import { openChaosPage, type ChaosPageConfig } from "../support/chaos-page";
import { openChat, type Chat } from "../support/chat";
import { CHAT_AGENT, CHAT_AGENT_PATH, type LogEntry, agentHost, agentUrl, post, readLog, textOf, uniqueName } from "../support/e2e";

let settings: ChaosSettings;
beforeAll(async () => {
  settings = await chaosSettings();
});
afterAll(async () => {
  await commands.chaosServerStop();
});

const random = (scenario: string): Rng => rng(scenarioSeed(settings.seed, scenario));

/** The server's transcript, as a client's first read gets it. */
async function serverMessages(name: string, origin?: string): Promise<UIMessage[]> {
  const base = origin ? `${origin}/agents/${CHAT_AGENT_PATH}/${encodeURIComponent(name)}` : agentUrl(name);
  // `audit` tells the agent's log this read is the test's, not a client's (see `syncCounts`).
  // Bounded: a restarted agent that never answers shows as a failed audit with a note, not as a test that hangs until its timeout.
  const response = await fetch(`${base}/get-messages?audit=1`, { signal: AbortSignal.timeout(15_000) });
  if (!response.ok) throw new Error(`get-messages: HTTP ${response.status}`);
  return (await response.json()) as UIMessage[];
}

/**
 * How the clients of a conversation learned its transcript, from the agent's
 * log: HTTP reads (`/get-messages`), snapshot requests, socket connections.
 * The audit's own reads (`serverMessages`) are left out. `origin`: the
 * server the conversation lives on, when not the shared e2e server.
 */
async function syncCounts(name: string, origin?: string) {
  const log = origin ? await readLogAt(origin, name) : await readLog(name);
  return {
    reads: log.filter((entry) => entry.kind === "get-messages" && !(entry.queryKeys as string[] | undefined)?.includes("audit")).length,
    snapshots: log.filter((entry) => entry.kind === "frame" && entry.type === "agents_vue_snapshot_request").length,
    connects: log.filter((entry) => entry.kind === "connect").length
  };
}

/** The agent's log of a conversation on the server at `origin` (the chaos server's, say). */
async function readLogAt(origin: string, name: string): Promise<LogEntry[]> {
  const response = await fetch(`${origin}/agents/${CHAT_AGENT_PATH}/${encodeURIComponent(name)}/log`, { signal: AbortSignal.timeout(15_000) });
  if (!response.ok) throw new Error(`log: HTTP ${response.status}`);
  return ((await response.json()) as { entries: LogEntry[] }).entries;
}

const turnsFinished = async (name: string) => (await readLog(name)).filter((entry) => entry.kind === "turn-finished").length;

const isTextDelta = (line: string) => line.includes('\\"type\\":\\"text-delta');

/** A frame log for a note: text deltas left out but for the first three and the last three of each stream. */
function framesNote(lines: readonly string[]): string {
  const kept = lines.filter((line, i) => !isTextDelta(line) || !isTextDelta(lines[i - 3] ?? "") || !isTextDelta(lines[i + 3] ?? ""));
  return `frames (${lines.length}, text deltas in the middle of a stream left out):\n${kept.join("\n")}`;
}

/** A message list in a note: each message as its role's initial and its id. */
const idList = (messages: readonly UIMessage[]) => `[${messages.map((m) => `${m.role[0]}:${m.id}`).join(" ")}]`;

/** A received frame in a note: a transcript frame as its message ids (its text would fill the note), others cut at 200 characters. */
function frameSummary(frame: unknown): string {
  const { type, messages } = (frame ?? {}) as { type?: unknown; messages?: unknown };
  if (type === "cf_agent_chat_messages" && Array.isArray(messages)) return `cf_agent_chat_messages ${idList(messages as UIMessage[])}`;
  return JSON.stringify(frame).slice(0, 200);
}

/**
 * Records the frames a client sends and receives, for the notes of a failed
 * trial; `note()` lists them, text deltas left out but for the first three
 * and the last three of each stream, and `reset()` starts over.
 */
function recordFrames(client: AgentClient) {
  let started = performance.now();
  let lines: string[] = [];
  const note = (direction: string, data: unknown) =>
    lines.push(`${Math.round(performance.now() - started)} ms ${direction} ${String(data).slice(0, 200)}`);
  client.addEventListener("message", (event) => note("<-", (event as MessageEvent).data));
  client.addEventListener("open", () => note("open", ""));
  client.addEventListener("close", () => note("close", ""));
  const send = client.send.bind(client);
  client.send = (data) => {
    note("->", data);
    return send(data);
  };
  return {
    reset() {
      started = performance.now();
      lines = [];
    },
    note: () => framesNote(lines)
  };
}

/** Waits for the client and server to agree (they may take a moment), then audits what is left. */
async function quiesceAndAudit(
  chat: Chat,
  fetchServer: () => Promise<UIMessage[]>,
  options: Parameters<typeof audit>[2] & { serverReady?: (server: UIMessage[]) => boolean } = {}
) {
  const stuck = await settle(chat);
  let server: UIMessage[] = [];
  let result = audit(chat.messages.value, server, options);
  await until(async () => {
    server = await fetchServer();
    if (options.serverReady && !options.serverReady(server)) return false;
    result = audit(chat.messages.value, server, options);
    return result.lost === 0 && result.duplicated === 0;
  }, 10_000, 100);
  result = audit(chat.messages.value, server, options);
  return { ...result, stuck: stuck.length > 0 ? 1 : 0, notes: [...result.notes, ...stuck.map((s) => `stuck: ${s}`)] };
}

describe("chaos: socket drops", () => {
  it("100-chunk turns survive 1-3 client-side drops at random chunk indices", async () => {
    const r = random("drops");
    const figures = new Figures("socket drops");
    const conversations = settings.full ? 10 : 1;
    const turns = settings.full ? 5 : 3;
    const chunks = 100;
    const expected = expectedText(chunks);
    for (let c = 0; c < conversations; c++) {
      const name = uniqueName("chaos-drops");
      const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
      const wire = recordFrames(client);
      const { chat, unmount } = openChat(name, {
        client: undefined,
        agent: client,
        body: { script: { chunks, chunkDelayMs: 12 } }
      });
      await chat.ready;
      for (let t = 0; t < turns; t++) {
        const drops = r.int(1, 3);
        const cuts = [...new Set(Array.from({ length: drops }, () => r.int(1, chunks - 5)))].toSorted((a, b) => a - b);
        const notes: string[] = [];
        wire.reset();
        const sent = chat.sendMessage({ text: `turn ${t}` }).catch((error: unknown) => notes.push(`send: ${String(error)}`));
        let faults = 0;
        for (const cut of cuts) {
          const reached = await until(() => textOf(chat.messages.value[2 * t + 1]).length >= expectedText(cut).length, 15_000, 2);
          if (!reached) {
            notes.push(`turn ${t}: reply never reached chunk ${cut}`);
            break;
          }
          client.reconnect();
          faults++;
        }
        await Promise.race([sent, until(() => false, 30_000)]);
        await until(async () => (await turnsFinished(name)) >= t + 1, 20_000, 100);
        const outcome = await quiesceAndAudit(chat, () => serverMessages(name), {
          expectedText: (m) => (m.role === "assistant" ? expected : undefined),
          serverReady: (server) => server.length >= 2 * (t + 1),
          label: `conversation ${c} turn ${t} cuts ${cuts.join("/")}`
        });
        const reply = chat.messages.value[2 * t + 1];
        if (reply && textOf(reply) !== expected) {
          outcome.lost++;
          outcome.notes.push(`turn ${t}: reply text ${textOf(reply).length} chars, expected ${expected.length}`);
        }
        if (outcome.lost + outcome.duplicated + outcome.stuck > 0) outcome.notes.push(wire.note());
        figures.trial({ faults, ...outcome, notes: [...notes, ...outcome.notes] });
      }
      figures.sync(await syncCounts(name));
      unmount();
      client.close();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 900_000);
});

describe("chaos: offline burst", () => {
  it("10 messages sent while the socket is down are delivered, answered, in order, once each", async () => {
    const figures = new Figures("offline burst");
    const trials = settings.full ? 10 : 1;
    const r = random("offline");
    for (let trial = 0; trial < trials; trial++) {
      const name = uniqueName("chaos-offline");
      const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
      const { chat, unmount } = openChat(name, { client: undefined, agent: client, body: { script: { echo: true, chunkDelayMs: r.int(0, 5) } } });
      await chat.ready;
      // Some history first, so a request sent without it would show.
      await chat.sendMessage({ text: `before ${trial}` });
      client.close();
      await until(() => chat.connectionStatus.value !== "open");
      const texts = Array.from({ length: 10 }, (_, i) => `offline ${trial}.${i}`);
      const notes: string[] = [];
      const sends = texts.map((text) => chat.sendMessage({ text }).catch((error: unknown) => notes.push(`send: ${String(error)}`)));
      client.reconnect();
      await Promise.race([Promise.all(sends), until(() => false, 60_000)]);
      const outcome = await quiesceAndAudit(chat, () => serverMessages(name), {
        sentOnce: texts,
        serverReady: (server) => server.length >= 22
      });
      // In order, each answered by its echo.
      const server = await serverMessages(name);
      const users = server.filter((m) => m.role === "user").map((m) => textParts(m).join(""));
      const expectedUsers = [`before ${trial}`, ...texts];
      for (const text of expectedUsers) {
        if (!users.includes(text)) {
          outcome.lost++;
          notes.push(`server lacks "${text}"`);
        }
      }
      if (users.filter((text) => expectedUsers.includes(text)).join("|") !== expectedUsers.join("|")) {
        outcome.lost++;
        notes.push(`out of order: ${users.join(" | ")}`);
      }
      server.forEach((message, i) => {
        if (message.role !== "user") return;
        const answer = server[i + 1];
        if (answer?.role !== "assistant" || textOf(answer) !== `echo: ${textOf(message)}`) {
          outcome.lost++;
          notes.push(`"${textOf(message)}" is not answered by its echo (got "${textOf(answer)}")`);
        }
      });
      figures.trial({ faults: 1, ...outcome, notes: [...notes, ...outcome.notes] });
      figures.sync(await syncCounts(name));
      unmount();
      client.close();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 600_000);
});



describe("chaos: server down with a queued send", () => {
  it("wrangler dev stops mid-stream, a message is sent while it is down, and it starts again", async () => {
    const figures = new Figures("server down, queued send");
    const trials = settings.full ? 5 : 1;
    const r = random("down-queued");
    const { host, origin } = await commands.chaosServerStart();
    for (let trial = 0; trial < trials; trial++) {
      const name = uniqueName("chaos-down");
      const client = new AgentClient({ agent: CHAT_AGENT, host, name });
      const wire = recordFrames(client);
      const { chat, unmount } = openChat(name, { client: undefined, agent: client, body: { script: { chunks: 100, chunkDelayMs: settings.full ? 25 : 10 } } });
      const notes: string[] = [];
      // Bounded (a full run once hung here for 15 minutes next to two property-test runs; not reproduced since).
      const loaded = await Promise.race([chat.ready.then(() => true), until(() => false, 30_000).then(() => false)]);
      if (!loaded) notes.push(`the first load did not answer within 30 s (isLoading ${chat.isLoading.value}, connection ${chat.connectionStatus.value})`);
      const story = chat.sendMessage({ text: `story ${trial}` }).catch((error: unknown) => notes.push(`send: ${String(error)}`));
      const cut = r.int(5, 80);
      await until(() => textOf(chat.messages.value[1]).length >= expectedText(cut).length, 15_000, 5);
      // The quick variant keeps the agent down only as long as a restart takes.
      const restarting = commands.chaosServerRestart(settings.full ? r.int(1500, 4000) : 0);
      notes.push(`stopped at chunk ~${cut}`);
      await until(() => chat.connectionStatus.value !== "open", 15_000, 5);
      const queued = chat.sendMessage({ text: `still there ${trial}` }).catch((error: unknown) => notes.push(`queued send: ${String(error)}`));
      const { restartMs } = await restarting;
      notes.push(`back after ${restartMs} ms`);
      const reconnected = await until(() => chat.connectionStatus.value === "open", 60_000, 50);
      await Promise.race([Promise.all([story, queued]), until(() => false, 30_000)]);
      const outcome = await quiesceAndAudit(chat, () => serverMessages(name, origin), {
        label: "after the queued send",
        serverReady: (server) => textOf(server.at(-1)) === expectedText(100)
      });
      if (!reconnected || !loaded) outcome.stuck = 1;
      const last = chat.messages.value.at(-1);
      if (last?.role !== "assistant" || textOf(last) !== expectedText(100)) {
        outcome.lost++;
        outcome.notes.push(`the queued send was not answered in full (${textOf(last).length} chars)`);
      }
      if (outcome.lost + outcome.duplicated + outcome.stuck > 0) outcome.notes.push(wire.note());
      figures.trial({ faults: 1, ...outcome, notes: [...notes, ...outcome.notes] });
      figures.sync(await syncCounts(name, origin));
      unmount();
      client.close();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 900_000);
});

/** One open client of a conversation in the reload scenario: a Vue app in the test's page, or a page of its own (an iframe). */
interface ReloadTab {
  readonly kind: "app" | "page";
  chat(): Chat;
  /** A remount in the same page (app) or a real page reload (page); resolves once the new chat is mounted. */
  reload(): Promise<void>;
  close(): void;
}

async function openReloadTab(kind: ReloadTab["kind"], config: ChaosPageConfig, awaitReady: boolean): Promise<ReloadTab> {
  if (kind === "page") {
    const page = await openChaosPage(config);
    return {
      kind,
      chat: () => page.chat()!,
      reload: async () => {
        await page.reload();
      },
      close: () => page.close()
    };
  }
  const mount = async () => {
    // A new persistence object over the same database: all the new mount shares with the old one is what the browser stored.
    const persist = indexedDBPersistence({ databaseName: config.databaseName });
    // An app may await `ready` before it mounts (the cached transcript in the first render), or not.
    if (awaitReady) await persist.ready;
    return openChat(config.client.name, { client: config.client, persist, body: config.body });
  };
  let current = await mount();
  let open = true;
  return {
    kind,
    chat: () => current.chat,
    reload: async () => {
      current.unmount();
      current = await mount();
    },
    close: () => {
      if (open) current.unmount();
      open = false;
    }
  };
}

/** How many queued sends the database `db` holds (persist's `q:` records). */
async function storedSends(db: string): Promise<number> {
  const store = indexedDBStore(db);
  const keys = (await store.keys()).filter((key) => key.startsWith("q:"));
  const records = await Promise.all(keys.map((key) => store.get(key)));
  return records.reduce<number>((sum, record) => sum + (Array.isArray(record) ? record.length : 0), 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `work`, or an error naming `what` after `ms`: a step that never ends fails its trial instead of the whole run. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A chat's state in a note. */
const chatState = (chat: Chat | undefined) =>
  chat
    ? `status ${chat.status.value}, connection ${chat.connectionStatus.value}, loading ${chat.isLoading.value}, cached ${chat.isCached.value}, queued ${chat.queuedMessages.value.length}, shows ${idList(chat.messages.value)}`
    : "no chat mounted";

describe("chaos: reload while offline with queued sends", () => {
  it("messages queued while the agent is down outlive a reload (remount or page reload, a second tab or only a later tab): each delivered and answered once", async () => {
    const figures = new Figures("reload while offline");
    // Each trial restarts the agent (about 10 to 15 s on a loaded machine).
    const trials = settings.full ? 8 : 1;
    const r = random("reload-offline");
    const { host, origin } = await commands.chaosServerStart();
    for (let trial = 0; trial < trials; trial++) {
      const name = uniqueName("chaos-reload-offline");
      const db = uniqueName("chaos-reload-db");
      const config: ChaosPageConfig = {
        // Fast reconnects: the agent is back within seconds, and a trial should not wait out a long backoff.
        client: { agent: CHAT_AGENT, host, name, minReconnectionDelay: 100, maxReconnectionDelay: 400 },
        databaseName: db,
        body: { script: { echo: true, chunkDelayMs: r.int(0, 20) } }
      };
      // The trial's plan, drawn from the seed.
      const layout = r.pick(["one tab", "two tabs", "only a later tab"] as const);
      const kinds = [r.pick(["app", "page"] as const), r.pick(["app", "page"] as const)] as const;
      const secondEarly = r.next() < 0.5;
      const count = r.int(1, 3);
      const waitForWrite = kinds[0] === "page" || r.next() < 0.5;
      const up = r.pick(["after the reload", "during the reload", "before the reload"] as const);
      const upDelay = r.int(0, 1200);
      const laterDelay = r.int(0, 1000);
      const plan = `${layout}, ${kinds[0]}${layout === "one tab" ? "" : `+${kinds[1]}`}${layout === "two tabs" ? (secondEarly ? " (second open before the outage)" : " (second opened while down)") : ""}, ${count} queued, agent back ${up} (+${upDelay} ms)${waitForWrite ? "" : ", reload without waiting for the write"}`;
      const notes: string[] = [`plan: ${plan}`];
      const tabs: ReloadTab[] = [];
      let step = "open";
      const open = async (kind: ReloadTab["kind"]) => {
        const tab = await within(openReloadTab(kind, config, r.next() < 0.5), 20_000, `open a tab (${kind})`);
        tabs.push(tab);
        return tab;
      };
      let outcome = { lost: 0, duplicated: 0, stuck: 0, other: 0, upstream: 0, notes: [] as string[] };
      const texts = Array.from({ length: count }, (_, i) => `queued ${trial}.${i}`);
      try {
        const first = await open(kinds[0]);
        if (layout === "two tabs" && secondEarly) await open(kinds[1]);
        await within(first.chat().ready, 30_000, "the first load");
        step = "first turn";
        await within(first.chat().sendMessage({ text: `before ${trial}` }), 30_000, "the first turn");
        await settle(first.chat());

        step = "down";
        await within(commands.chaosServerDown(), 30_000, "stop the agent");
        for (const tab of tabs) await until(() => tab.chat().connectionStatus.value !== "open", 15_000, 5);
        const sender = first.chat();
        for (const text of texts) void sender.sendMessage({ text }).catch((error: unknown) => notes.push(`send "${text}": ${String(error)}`));
        if (!(await until(() => sender.queuedMessages.value.length === count, 5_000, 5))) {
          outcome.other++;
          notes.push(`queued ${sender.queuedMessages.value.length} of ${count}`);
        }
        const queuedIds = sender.queuedMessages.value.map((message) => message.id);
        if (layout === "two tabs" && !secondEarly) await open(kinds[1]);
        // A page's pending IndexedDB writes may die with it: a real reload comes once the sends are stored.
        if (waitForWrite && !(await until(async () => (await storedSends(db)) === count, 10_000, 10))) {
          outcome.other++;
          notes.push(`stored ${await storedSends(db)} of ${count} queued sends before the reload`);
        }

        step = "reload";
        let back: Promise<{ startMs: number }> | undefined;
        if (up === "before the reload") {
          back = commands.chaosServerUp();
          await within(back, 60_000, "start the agent");
          await sleep(upDelay / 4);
        } else if (up === "during the reload") {
          back = commands.chaosServerUp();
          await sleep(upDelay);
        }
        if (layout === "only a later tab") {
          first.close();
          tabs.splice(tabs.indexOf(first), 1);
          await sleep(laterDelay);
          await open(kinds[1]);
        } else {
          await within(first.reload(), 20_000, `reload (${first.kind})`);
        }
        if (up === "after the reload") {
          await sleep(upDelay);
          back = commands.chaosServerUp();
        }
        step = "up";
        notes.push(`agent started in ${(await within(back!, 60_000, "start the agent")).startMs} ms`);
        step = "delivery";

        // Delivered: the agent stores every queued message with its echo.
        const expectedUsers = [`before ${trial}`, ...texts];
        const answered = (server: UIMessage[]) =>
          expectedUsers.every((text) => server.some((m, i) => m.role === "user" && textOf(m) === text && textOf(server[i + 1]) === `echo: ${text}`));
        if (!(await until(async () => answered(await serverMessages(name, origin)), 60_000, 100))) notes.push("not every queued message was answered within 60 s");
        for (const [i, tab] of tabs.entries()) {
          const chat = tab.chat();
          const one = await quiesceAndAudit(chat, () => serverMessages(name, origin), {
            sentOnce: expectedUsers,
            label: `tab ${i} (${tab.kind})`,
            serverReady: answered
          });
          if (chat.queuedMessages.value.length > 0) {
            one.stuck = 1;
            one.notes.push(`tab ${i} still shows ${chat.queuedMessages.value.length} queued`);
          }
          // A first read that failed is made again after a growing pause (1 s, doubling, at most 30 s): a tab whose
          // reads failed while the agent came back may still wait for one. Stuck is cached past that schedule.
          if (chat.isCached.value && !(await until(() => !chat.isCached.value, 35_000, 50))) {
            one.stuck = 1;
            one.notes.push(`tab ${i} still flags its transcript cached (isLoading ${chat.isLoading.value}, socket ${chat.connectionStatus.value})`);
          }
          if (one.lost + one.duplicated > 0) one.notes.push(`tab ${i} shows ${idList(chat.messages.value)}; the server holds ${idList(await serverMessages(name, origin))}`);
          outcome = {
            lost: outcome.lost + one.lost,
            duplicated: outcome.duplicated + one.duplicated,
            stuck: outcome.stuck + one.stuck,
            other: outcome.other,
            upstream: Math.max(outcome.upstream, one.upstream),
            notes: [...outcome.notes, ...one.notes]
          };
        }

        // The server: each message once, in order, each answered by its echo; each queued message sent by one request.
        const server = await serverMessages(name, origin);
        const users = server.filter((m) => m.role === "user").map((m) => textOf(m));
        for (const text of expectedUsers) {
          const copies = users.filter((u) => u === text).length;
          if (copies === 0) {
            outcome.lost++;
            notes.push(`the server lacks "${text}"`);
          } else if (copies > 1) {
            outcome.duplicated += copies - 1;
            notes.push(`the server holds "${text}" ${copies} times`);
          }
        }
        if (users.filter((text) => expectedUsers.includes(text)).join("|") !== expectedUsers.join("|")) {
          outcome.lost++;
          notes.push(`out of order: ${users.join(" | ")}`);
        }
        server.forEach((message, i) => {
          if (message.role !== "user") return;
          const answer = server[i + 1];
          if (answer?.role !== "assistant" || textOf(answer) !== `echo: ${textOf(message)}`) {
            outcome.lost++;
            notes.push(`"${textOf(message)}" is not answered by its echo (got "${textOf(answer)}")`);
          }
        });
        const requests = (await readLogAt(origin, name)).filter((entry) => entry.kind === "frame" && entry.type === "cf_agent_use_chat_request");
        for (const [i, id] of queuedIds.entries()) {
          const sent = requests.filter((entry) => (entry.messageIds as string[] | undefined)?.at(-1) === id).length;
          if (sent > 1) {
            outcome.duplicated += sent - 1;
            notes.push(`"${texts[i]}" (${id}) went out in ${sent} requests`);
          }
        }
        // Delivered sends leave the store: none is sent again by a later page.
        if (!(await until(async () => (await storedSends(db)) === 0, 10_000, 50))) {
          outcome.stuck++;
          notes.push(`${await storedSends(db)} delivered sends are still stored`);
        }
      } catch (error) {
        outcome.stuck++;
        notes.push(`trial failed at step ${step}: ${error instanceof Error ? error.message : String(error)}`);
        for (const [i, tab] of tabs.entries()) notes.push(`tab ${i} (${tab.kind}): ${chatState(tab.chat())}`);
        // Whatever happened, the next trial starts with the agent up.
        await commands.chaosServerUp().catch(() => {});
      } finally {
        for (const tab of tabs) tab.close();
      }
      figures.trial({ faults: 2, ...outcome, notes: [...notes, ...outcome.notes] });
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 900_000);
});

// Upstream #1485: a turn the restarted server recovers under a new request id must not leave the chat streaming.
describe("chaos: server restart", () => {
  it("wrangler dev stops mid-stream and starts again on the same port and persist dir", async () => {
    const figures = new Figures("server restart");
    const trials = settings.full ? 5 : 1;
    const r = random("restart");
    const { host, origin } = await commands.chaosServerStart();
    for (let trial = 0; trial < trials; trial++) {
      const name = uniqueName("chaos-restart");
      // The quick variant streams faster: the restart, not the reply, is what it checks.
      const script = { chunks: 100, chunkDelayMs: settings.full ? 25 : 10 };
      const { chat, unmount } = openChat(name, { client: { agent: CHAT_AGENT, host, name }, body: { script } });
      const notes: string[] = [];
      await until(() => chat.isLoading.value === false && chat.connectionStatus.value === "open", 30_000);
      await chat.sendMessage({ text: `before ${trial}` });
      const during = chat.sendMessage({ text: `during ${trial}` }).catch((error: unknown) => notes.push(`send: ${String(error)}`));
      const cut = r.int(5, 80);
      await until(() => textOf(chat.messages.value[3]).length >= expectedText(cut).length, 15_000, 5);
      // A deploy or a loaded machine can keep the agent away for longer: in the full run about half the outages last 10 s more
      // (a restarted agent then stores the cut reply and offers its recovery while the client is still backing off).
      const downMs = r.int(0, 1500) + (settings.full && r.int(0, 1) === 1 ? 10_000 : 0);
      const { restartMs } = await commands.chaosServerRestart(downMs);
      notes.push(`restarted at chunk ~${cut} in ${restartMs} ms`);
      // The client reconnects by itself.
      const reconnected = await until(() => chat.connectionStatus.value === "open", 60_000, 50);
      await Promise.race([during, until(() => false, 30_000)]);
      let stuck = 0;
      let lost = 0;
      let duplicated = 0;
      let upstream = 0;
      const afterRestart = await settle(chat, 30_000);
      if (!reconnected || afterRestart.length > 0) {
        stuck++;
        notes.push(`after the restart: ${reconnected ? afterRestart.join(", ") : "never reconnected"}`);
      }
      if (chat.status.value === "ready") {
        // No error shown: what is on screen must be what the server holds.
        const outcome = await quiesceAndAudit(chat, () => serverMessages(name, origin), { label: "after restart" });
        lost = outcome.lost;
        duplicated = outcome.duplicated;
        upstream = outcome.upstream;
        notes.push(...outcome.notes);
      } else {
        notes.push(`after the restart: status ${chat.status.value} (${chat.error.value?.message ?? "no error"})`);
      }
      // A new send recovers either way.
      await Promise.race([
        chat.sendMessage({ text: `after ${trial}` }).catch((error: unknown) => notes.push(`send after: ${String(error)}`)),
        until(() => false, 30_000)
      ]);
      const final = await quiesceAndAudit(chat, () => serverMessages(name, origin), {
        label: "after a new send",
        serverReady: (server) => textOf(server.at(-1)) === expectedText(100)
      });
      if (textOf(chat.messages.value.at(-1)) !== expectedText(100)) {
        final.lost++;
        final.notes.push(`the send after the restart was not answered in full (${textOf(chat.messages.value.at(-1)).length} chars)`);
      }
      figures.trial({
        faults: 1,
        lost: Math.max(lost, final.lost),
        duplicated: Math.max(duplicated, final.duplicated),
        stuck: Math.max(stuck, final.stuck),
        upstream: Math.max(upstream, final.upstream),
        notes: [...notes, ...final.notes]
      });
      figures.sync(await syncCounts(name, origin));
      unmount();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 900_000);
});

describe("chaos: many clients", () => {
  it("3 clients, 30 random interleaved actions: every transcript ends equal to the server's", async () => {
    const figures = new Figures("many clients");
    const rounds = settings.full ? 10 : 1;
    const r = random("many");
    for (let round = 0; round < rounds; round++) {
      const name = uniqueName("chaos-many");
      const scripts: Array<Record<string, unknown>> = [{}, {}, {}];
      // What each client received, for the notes of a client that ends wrong.
      const started = performance.now();
      const received: string[][] = [[], [], []];
      const clients = [0, 1, 2].map((i) =>
        openChat(name, {
          body: () => ({ script: scripts[i] }),
          onFrame: (frame) => void received[i]!.push(`${Math.round(performance.now() - started)} ms <- ${frameSummary(frame)}`)
        })
      );
      // Each action goes in the acting client's log with what it had on screen, so a note shows what a request carried.
      const acted = (i: number, action: string, messages: readonly UIMessage[]) =>
        received[i]!.push(`${Math.round(performance.now() - started)} ms ${action}; on screen ${idList(messages)}`);
      await Promise.all(clients.map(({ chat }) => chat.ready));
      const notes: string[] = [];
      const pending: Array<Promise<unknown>> = [];
      const track = (label: string, promise: Promise<unknown>) =>
        pending.push(promise.catch((error: unknown) => notes.push(`${label}: ${String(error)}`)));
      const actions: string[] = [];
      for (let a = 0; a < 30; a++) {
        const i = r.int(0, 2);
        const { chat } = clients[i]!;
        const action = r.pick(["send", "send", "send", "stop", "regenerate", "clear", "tool"] as const);
        actions.push(`${i}:${action}`);
        acted(i, action, chat.messages.value);
        switch (action) {
          case "send":
            scripts[i] =
              r.next() < 0.3
                ? { toolCalls: [{ toolName: "askUser", input: { question: `q${a}` } }], chunkDelayMs: r.int(0, 10) }
                : { chunks: r.int(3, 40), chunkDelayMs: r.int(0, 15) };
            track(`send ${a}`, chat.sendMessage({ text: `c${i} a${a}` }));
            break;
          case "stop":
            track(`stop ${a}`, chat.stop());
            break;
          case "regenerate":
            if (chat.messages.value.at(-1)?.role === "assistant") track(`regenerate ${a}`, chat.regenerate());
            break;
          case "clear":
            chat.clearHistory();
            break;
          case "tool": {
            const part = chat.messages.value
              .flatMap((m) => m.parts)
              .find((p) => p.type === "tool-askUser" && (p as { state?: string }).state === "input-available") as
              | { toolCallId: string }
              | undefined;
            if (part) chat.addToolOutput({ toolCallId: part.toolCallId, output: { answer: `yes ${a}` } });
            break;
          }
        }
        // The fault schedule: actions land at random points of each other's turns.
        await new Promise((resolve) => setTimeout(resolve, r.int(0, 250)));
      }
      await Promise.race([Promise.all(pending), until(() => false, 60_000)]);
      // Quiescence: every client idle and the server runs no turn.
      const stuckBy = await Promise.all(clients.map(({ chat }) => settle(chat, 30_000)));
      await until(async () => {
        const log = await readLog(name);
        const started = log.filter((e) => e.kind === "chat-message").length;
        return started === log.filter((e) => e.kind === "turn-finished").length;
      }, 30_000, 200);
      figures.sync(await syncCounts(name));
      let lost = 0;
      let duplicated = 0;
      let stuck = 0;
      let upstream = 0;
      for (const [i, { chat }] of clients.entries()) {
        const outcome = await quiesceAndAudit(chat, () => serverMessages(name), { label: `client ${i}` });
        if (outcome.lost + outcome.duplicated > 0) {
          outcome.notes.push(`client ${i} shows ${idList(chat.messages.value)}; the server holds ${idList(await serverMessages(name))}`);
          outcome.notes.push(`client ${i} ${framesNote(received[i]!)}`);
        }
        lost += outcome.lost;
        duplicated += outcome.duplicated;
        upstream = Math.max(upstream, outcome.upstream);
        stuck += stuckBy[i]!.length > 0 || outcome.stuck ? 1 : 0;
        notes.push(...outcome.notes, ...stuckBy[i]!.map((s) => `client ${i} stuck: ${s}`));
      }
      figures.trial({ faults: 30, lost, duplicated, stuck, upstream, notes: [`actions ${actions.join(" ")}`, ...notes] });
      for (const { unmount } of clients) unmount();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 900_000);
});

describe("chaos: hostile server requests", () => {
  it("a tool call for a name the client never registered is not executed; an update for an unknown id does not append", async () => {
    const figures = new Figures("hostile server requests");
    const executed: string[] = [];
    const tools = {
      weather: {
        description: "Weather for a city",
        parameters: { type: "object", properties: { city: { type: "string" } } } as const,
        execute: async (input: unknown) => {
          executed.push(JSON.stringify(input));
          return { temp: 21 };
        }
      }
    };
    const hostileNames = ["askUser", "notRegistered", "constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

    // 1. The real model calls tools the client never registered.
    for (const toolName of hostileNames) {
      const name = uniqueName("chaos-hostile");
      const { chat, unmount } = openChat(name, {
        tools,
        body: { script: { toolCalls: [{ toolName, input: { city: "x" } }] } }
      });
      await chat.ready;
      const notes: string[] = [];
      await chat.sendMessage({ text: `call ${toolName}` }).catch((error: unknown) => notes.push(String(error)));
      const stuck = await settle(chat);
      await until(async () => (await turnsFinished(name)) >= 1, 10_000, 100);
      const results = (await readLog(name)).filter((e) => e.type === "cf_agent_tool_result");
      const other = executed.length + results.length;
      if (other) notes.push(`model call to ${toolName}: executed ${executed.join(",")}; ${results.length} tool results sent`);
      figures.trial({ faults: 1, other, stuck: stuck.length ? 1 : 0, notes: [...notes, ...stuck] });
      executed.length = 0;
      unmount();
    }

    // 2. The server pushes a transcript holding calls to unregistered tools.
    {
      const name = uniqueName("chaos-hostile-push");
      let markers = 0;
      const { chat, unmount } = openChat(name, {
        tools,
        onFrame: (frame) => {
          if ((frame as { type?: unknown }).type === "chaos_marker") markers++;
        }
      });
      await chat.ready;
      const parts = hostileNames.map((toolName, i) => ({
        type: `tool-${toolName}`,
        toolCallId: `hostile-${i}`,
        state: "input-available",
        input: { city: "x" }
      }));
      await post(name, "broadcast", {
        type: "cf_agent_chat_messages",
        messages: [
          { id: "hu", role: "user", parts: [{ type: "text", text: "hi" }] },
          { id: "ha", role: "assistant", parts }
        ]
      });
      await until(() => chat.messages.value.length === 2);
      // Tools run in the reconcile pass after the change; a frame sent after the push, and
      // a marker the server logs after that, come after anything the client sent for it.
      await post(name, "broadcast", { type: "chaos_marker" });
      await until(() => markers === 1);
      await post(name, "broadcast", { type: "chaos_marker" });
      await until(() => markers === 2);
      const results = (await readLog(name)).filter((e) => e.type === "cf_agent_tool_result");
      const other = executed.length + results.length;
      figures.trial({
        faults: hostileNames.length,
        other,
        notes: other ? [`pushed calls: executed ${executed.join(",")}; ${results.length} tool results sent`] : []
      });
      unmount();
    }

    // 3. cf_agent_message_updated for ids the client does not have.
    {
      const name = uniqueName("chaos-hostile-update");
      let markers = 0;
      const { chat, unmount } = openChat(name, {
        body: { script: { chunks: 3 } },
        onFrame: (frame) => {
          if ((frame as { type?: unknown }).type === "chaos_marker") markers++;
        }
      });
      await chat.ready;
      await chat.sendMessage({ text: "hello" });
      await settle(chat);
      const before = chat.messages.value.map((m) => m.id);
      const ids = ["unknown-id", "__proto__", "constructor", "", before[0] + "x"];
      for (const id of ids) {
        await post(name, "broadcast", {
          type: "cf_agent_message_updated",
          message: { id, role: "assistant", parts: [{ type: "text", text: `injected ${id}` }] }
        });
      }
      // The next frame on the socket is handled after the injected ones.
      await post(name, "broadcast", { type: "chaos_marker" });
      await until(() => markers === 1);
      const appended = chat.messages.value.length - before.length;
      const changed = JSON.stringify(chat.messages.value.map((m) => m.id)) !== JSON.stringify(before);
      figures.trial({
        faults: ids.length,
        lost: changed && appended === 0 ? 1 : 0,
        other: Math.max(0, appended),
        notes: appended ? [`${appended} messages appended by unknown-id updates`] : []
      });
      unmount();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 300_000);
});

describe("chaos: churn", () => {
  it("mount/unmount and reconnect cycles leave no connection, listener or timer behind", async () => {
    const figures = new Figures("churn");
    const cycles = settings.full ? 200 : 20;
    const name = uniqueName("chaos-churn");
    const connections = async () => {
      const log = await readLog(name);
      return log.filter((e) => e.kind === "connect").length - log.filter((e) => e.kind === "close").length;
    };
    // A warm-up mount, so what the first app in a page sets up once (Vue's devtools hook) is not counted.
    {
      const { chat, unmount } = openChat(name);
      await until(() => chat.connectionStatus.value === "open" && !chat.isLoading.value, 15_000, 5);
      unmount();
    }
    const page = instrumentPage();
    try {
      // Mount/unmount cycles: each mount opens its socket before it goes.
      for (let i = 0; i < cycles; i++) {
        const { chat, unmount } = openChat(name);
        const opened = await until(() => chat.connectionStatus.value === "open" && !chat.isLoading.value, 15_000, 5);
        unmount();
        figures.trial({ faults: 1, stuck: opened ? 0 : 1, notes: opened ? [] : [`mount ${i} never opened`] });
      }
      const drained = await until(async () => (await connections()) === 0, 30_000, 200);
      const leftOpen = await connections();
      // Give timers the library may have left a chance to show: nothing of ours should be pending now.
      const timers = page.timers().filter((t) => !t.includes("until"));
      const listeners = page.leftoverListeners();
      figures.trial({
        faults: 0,
        other: (drained ? 0 : leftOpen) + timers.length + listeners.length,
        notes: [`${leftOpen} connections open on the server`, ...timers.slice(0, 5), ...listeners.slice(0, 5)]
      });

      // Reconnect cycles on one mounted chat.
      const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
      let opens = 0;
      const onOpen = () => opens++;
      client.addEventListener("open", onOpen);
      const { chat, unmount } = openChat(name, { client: undefined, agent: client });
      await until(() => opens === 1 && chat.connectionStatus.value === "open" && !chat.isLoading.value, 15_000, 5);
      const listenersAtStart = page.leftoverListeners().length;
      for (let i = 0; i < cycles; i++) {
        client.reconnect();
        const opened = await until(() => opens === i + 2 && chat.connectionStatus.value === "open", 15_000, 5);
        figures.trial({ faults: 1, stuck: opened ? 0 : 1, notes: opened ? [] : [`reconnect ${i} never opened`] });
      }
      await settle(chat);
      const grown = page.leftoverListeners().length - listenersAtStart;
      const oneLeft = await until(async () => (await connections()) === 1, 30_000, 200);
      unmount();
      client.removeEventListener("open", onOpen);
      client.close();
      const closed = await until(async () => (await connections()) === 0, 30_000, 200);
      const timers2 = page.timers().filter((t) => !t.includes("until"));
      const listeners2 = page.leftoverListeners();
      figures.trial({
        faults: 0,
        other: (oneLeft ? 0 : 1) + (closed ? 0 : 1) + Math.max(0, grown) + timers2.length + listeners2.length,
        notes: [
          `server connections: ${await connections()}; listeners grew by ${grown} over the reconnects`,
          ...timers2.slice(0, 5),
          ...listeners2.slice(0, 5)
        ]
      });
    } finally {
      page.restore();
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 900_000);
});

/** A console argument as text (an error with its stack). */
const show = (value: unknown): string => {
  if (value instanceof Error) return `${value.name}: ${value.message}\n${value.stack ?? ""}`;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

describe("chaos: secrets", () => {
  it("tokens in query or headers never appear in console output from the library", async () => {
    const figures = new Figures("secrets");
    const r = random("secrets");
    const token = `qtok-${r.int(1e8, 9e8)}`;
    const bearer = `htok-${r.int(1e8, 9e8)}`;
    const secrets = [token, bearer, encodeURIComponent(token), encodeURIComponent(bearer)];
    const captured: string[] = [];
    const methods = ["log", "info", "warn", "error", "debug", "trace"] as const;
    const originals = methods.map((method) => console[method]);
    methods.forEach((method, i) => {
      console[method] = (...args: unknown[]) => {
        captured.push(args.map(show).join(" "));
        originals[i]!.apply(console, args);
      };
    });
    const leaks = (extra: string[] = []) =>
      [...captured, ...extra].filter((line) => secrets.some((secret) => line.includes(secret))).length;
    const secretOptions = (name: string, host = agentHost()) => ({
      client: { agent: CHAT_AGENT, host, name, query: { token } },
      headers: { Authorization: `Bearer ${bearer}` }
    });
    try {
      // Each trial provokes console output while the tokens are in use.
      const trials: Array<[string, () => Promise<string[]>]> = [
        ["a transcript read that fails (HTTP 500)", async () => {
          const { chat, unmount } = openChat(uniqueName("broken500-secret"), secretOptions(uniqueName("broken500-secret")));
          await chat.ready;
          unmount();
          return [];
        }],
        ["a transcript that is not JSON", async () => {
          const name = uniqueName("brokenjson-secret");
          const { chat, unmount } = openChat(name, secretOptions(name));
          await chat.ready;
          unmount();
          return [];
        }],
        ["an unreachable server", async () => {
          const name = uniqueName("chaos-secret");
          const { chat, unmount } = openChat(name, secretOptions(name, "127.0.0.1:9"));
          await until(() => chat.connectionError.value !== null, 15_000);
          const error = chat.connectionError.value;
          unmount();
          return [show(error)];
        }],
        ["bad frames, a failing turn, throwing callbacks", async () => {
          const name = uniqueName("chaos-secret");
          let markers = 0;
          const { chat, unmount } = openChat(name, {
            ...secretOptions(name),
            body: { script: { chunks: 5, errorAfter: 2 } },
            onFrame: (frame) => {
              if ((frame as { type?: unknown }).type === "chaos_marker") markers++;
              if ((frame as { type?: unknown }).type === "chaos_throw") throw new Error("onFrame failed");
            },
            onTurnEnd: () => {
              throw new Error("onTurnEnd failed");
            }
          });
          await chat.ready;
          await post(name, "broadcast-raw", "not json at all");
          await post(name, "broadcast", { type: "cf_agent_use_chat_response", id: 42 });
          await post(name, "broadcast", { type: "cf_agent_chat_messages", messages: [{ id: 1 }] });
          await post(name, "broadcast", { type: "chaos_throw" });
          await chat.sendMessage({ text: "fail please" }).catch(() => {});
          await settle(chat);
          await post(name, "broadcast", { type: "chaos_marker" });
          await until(() => markers === 1);
          const error = chat.error.value;
          unmount();
          return [show(error)];
        }]
      ];
      for (const [label, run] of trials) {
        const before = captured.length;
        const extra = await run();
        const leaked = leaks(extra);
        figures.trial({
          faults: 1,
          other: leaked,
          notes: leaked ? [`${label}: ${captured.slice(before).filter((l) => secrets.some((s) => l.includes(s))).join(" / ").slice(0, 300)}`] : []
        });
        captured.length = 0;
      }
    } finally {
      methods.forEach((method, i) => {
        console[method] = originals[i]!;
      });
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 300_000);
});
