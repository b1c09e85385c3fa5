/**
 * Exact sync end to end: `useAgentChat` against the fixture's ordered agent
 * (`OrderedChatAgent`, the stock agent plus `orderTranscript`), whatever agent
 * the run is about. The wire contract itself is `ordered.test.ts`'s.
 */
import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { watch } from "vue";
import { useAgentChat } from "../../src";
import { SNAPSHOT_REQUEST } from "../../src/server/ordered-wire";
import { expectedText } from "../fixtures/worker/src/script";
import { mountComposable } from "../support/mount";
import { STOCK_AGENT, agentHost, framesOf, post, readLog, shape, stored, textOf, uniqueName, waitForLog } from "../support/e2e";

const ORDERED = "OrderedChatAgent";

/** A chat on the ordered agent that records the version of every transcript frame it is handed. */
function openExact(name: string, body: Record<string, unknown> = {}) {
  const versions: number[] = [];
  const mounted = mountComposable(() =>
    useAgentChat({
      client: { agent: ORDERED, host: agentHost(), name },
      body,
      onFrame: (frame) => {
        const version = (frame as { version?: unknown } | null)?.version;
        if (typeof version === "number") versions.push(version);
      }
    })
  );
  return { chat: mounted.result, unmount: mounted.unmount, versions };
}

describe("exact sync with useAgentChat", () => {
  it("an eviction mid-conversation: the chat reconnects, versions keep going up, and it ends with the stored transcript", async () => {
    const name = uniqueName("exact-evict");
    const { chat, unmount, versions } = openExact(name, { script: { chunks: 30, chunkDelayMs: 20 } });
    await chat;
    await chat.sendMessage({ text: "first" });
    await vi.waitFor(async () => expect(shape(chat.messages.value)).toEqual(shape(await stored(name, ORDERED))));
    const before = Math.max(...versions);
    const second = chat.sendMessage({ text: "second" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[3]).length).toBeGreaterThan(10));
    // Reset the Durable Object mid-turn, as an eviction would: every socket drops.
    expect((await post(name, "crash", {}, ORDERED)).status).toBe(202);
    await second.catch(() => {});
    await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"), { timeout: 20_000 });
    await chat.sendMessage({ text: "third" });
    await vi.waitFor(async () => expect(shape(chat.messages.value)).toEqual(shape(await stored(name, ORDERED))), { timeout: 15_000 });
    expect(textOf(chat.messages.value.at(-1))).toBe(expectedText(30));
    // Frames arrive in version order on a socket, and the new one's connect frame starts at least where the old left off.
    const afterCrash = versions.slice(versions.indexOf(before) + 1);
    expect(afterCrash.every((version) => version >= before)).toBe(true);
    expect(Math.max(...versions)).toBeGreaterThan(before);
    unmount();
  });

  it("no HTTP read after the first chat of the page: a second chat waits for the connect-time transcript", async () => {
    const name = uniqueName("exact-reads");
    const first = openExact(name);
    await first.chat;
    await first.chat.sendMessage({ text: "hello" });
    first.unmount();
    const second = openExact(name);
    await second.chat;
    await vi.waitFor(async () => expect(shape(second.chat.messages.value)).toEqual(shape(await stored(name, ORDERED))));
    const reads = (await readLog(name, ORDERED)).filter((entry) => entry.kind === "get-messages");
    // At most the page's first chat read, before it had seen this agent push (another test's chat may have).
    expect(reads.length).toBeLessThanOrEqual(1);
    expect(second.chat.messages.value.map((m: UIMessage) => m.role)).toEqual(["user", "assistant"]);
    second.unmount();
  });
});

type Frame = Record<string, unknown>;

/**
 * A chat on `agent` that keeps every socket frame it is handed (`onFrame`)
 * and every transcript it shows: publication is not throttled and the
 * watcher runs on each change, so a transcript shown for an instant is kept.
 */
function openWatched(name: string, agent = ORDERED) {
  const frames: Frame[] = [];
  const shown: UIMessage[][] = [];
  const mounted = mountComposable(() => {
    const chat = useAgentChat({
      client: { agent, host: agentHost(), name },
      throttle: false,
      onFrame: (frame) => void frames.push(frame as Frame)
    });
    watch(chat.messages, (messages) => void shown.push(messages), { flush: "sync" });
    return chat;
  });
  const versions = () => frames.map((frame) => frame.version).filter((version): version is number => typeof version === "number");
  return { chat: mounted.result, unmount: mounted.unmount, frames, shown, versions };
}

type Watched = ReturnType<typeof openWatched>;

/** Two finished turns, shown and stored: four messages. */
async function twoTurns(name: string, watched: Watched, agent = ORDERED): Promise<UIMessage[]> {
  await watched.chat;
  await watched.chat.sendMessage({ text: "one" });
  await watched.chat.sendMessage({ text: "two" });
  const transcript = await stored(name, agent);
  expect(transcript.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
  await vi.waitFor(() => expect(shape(watched.chat.messages.value)).toEqual(shape(transcript)));
  return transcript;
}

/** Puts `frame` on every socket of the conversation as it is (no version stamped), and waits until the chat was handed it. */
async function inject(name: string, watched: Watched, frame: Frame): Promise<void> {
  const response = await post(name, "send-raw", frame, ORDERED);
  expect(response.status).toBe(200);
  expect(((await response.json()) as { sent: number }).sent).toBeGreaterThan(0);
  await vi.waitFor(() => expect(watched.frames).toContainEqual(frame));
}

/** Waits for a snapshot request in the agent's log, then for its answer on the chat's socket. */
async function snapshotAnswered(name: string, watched: Watched): Promise<Frame> {
  await waitForLog(name, (entry) => entry.kind === "frame" && entry.type === SNAPSHOT_REQUEST, { agent: ORDERED });
  let answer: Frame | undefined;
  await vi.waitFor(() => {
    answer = watched.frames.find((frame) => typeof frame.snapshot === "string");
    expect(answer, "a snapshot answer").toBeDefined();
  });
  return answer!;
}

describe("exact sync: a frame that skips a version (injected on the live socket)", () => {
  it("a cf_agent_chat_clear that skips a version changes nothing, asks for a snapshot, and the chat ends at the server's version", async () => {
    const name = uniqueName("exact-skip-clear");
    const watched = openWatched(name);
    const transcript = await twoTurns(name, watched);
    const held = Math.max(...watched.versions());
    expect(await framesOf(name, SNAPSHOT_REQUEST, ORDERED)).toHaveLength(0);
    const from = watched.shown.length;

    await inject(name, watched, { type: "cf_agent_chat_clear", version: held + 2 });
    const answer = await snapshotAnswered(name, watched);
    // The agent never cleared: the answer is the stored transcript at the version the chat held.
    expect(answer).toMatchObject({ version: held });
    expect(shape(answer.messages as UIMessage[])).toEqual(shape(transcript));
    await vi.waitFor(() => expect(shape(watched.chat.messages.value)).toEqual(shape(transcript)));
    // Not for an instant was the screen emptied.
    expect(watched.shown.slice(from).map((messages) => messages.length)).not.toContain(0);
    expect(shape(await stored(name, ORDERED))).toEqual(shape(transcript));
    // The chat still holds the agent's version: the next change applies and shows.
    await watched.chat.sendMessage({ text: "three" });
    await vi.waitFor(async () => expect(shape(watched.chat.messages.value)).toEqual(shape(await stored(name, ORDERED))));
    expect(watched.chat.messages.value).toHaveLength(6);
    watched.unmount();
  });

  it("a cf_agent_message_updated that skips a version is never shown; the snapshot brings the transcript", async () => {
    const name = uniqueName("exact-skip-update");
    const watched = openWatched(name);
    const transcript = await twoTurns(name, watched);
    const held = Math.max(...watched.versions());
    const from = watched.shown.length;
    const reply = transcript[1]!;

    const injectedText = "an update that skipped a version";
    await inject(name, watched, {
      type: "cf_agent_message_updated",
      message: { ...reply, parts: [{ type: "text", text: injectedText }] },
      version: held + 2
    });
    const answer = await snapshotAnswered(name, watched);
    expect(answer).toMatchObject({ version: held });
    await vi.waitFor(() => expect(shape(watched.chat.messages.value)).toEqual(shape(transcript)));
    const everShown = watched.shown.slice(from).flatMap((messages) => messages.map((message) => textOf(message)));
    expect(everShown).not.toContain(injectedText);
    expect(textOf(watched.chat.messages.value[1])).toBe(textOf(reply));
    watched.unmount();
  });
});

describe("exact sync: setMessages that removes messages", () => {
  it("is a replacement on an ordered agent: stored, versioned, and shown by every tab", async () => {
    const name = uniqueName("exact-set-remove");
    const a = openWatched(name);
    const transcript = await twoTurns(name, a);
    const b = openWatched(name);
    await b.chat;
    await vi.waitFor(() => expect(shape(b.chat.messages.value)).toEqual(shape(transcript)));
    const before = Math.max(...a.versions());

    a.chat.setMessages((current) => current.slice(0, 2));
    expect(shape(a.chat.messages.value)).toEqual(shape(transcript.slice(0, 2)));
    // The agent stores the list, and the change has a version every tab reaches.
    await vi.waitFor(async () => expect(shape(await stored(name, ORDERED))).toEqual(shape(transcript.slice(0, 2))));
    await vi.waitFor(() => {
      expect(Math.max(...a.versions())).toBeGreaterThan(before);
      expect(Math.max(...b.versions())).toBe(Math.max(...a.versions()));
    });
    for (const tab of [a, b]) expect(shape(tab.chat.messages.value)).toEqual(shape(transcript.slice(0, 2)));
    // A new tab's connect frame: the same transcript at the same version.
    const c = openWatched(name);
    await c.chat;
    const connect = await vi.waitFor(() => {
      const frame = c.frames.find((candidate) => candidate.connect === true);
      expect(frame).toBeDefined();
      return frame!;
    });
    expect(connect.version).toBe(Math.max(...a.versions()));
    expect(shape(connect.messages as UIMessage[])).toEqual(shape(transcript.slice(0, 2)));
    // The conversation goes on from the shorter transcript, in step everywhere.
    await a.chat.sendMessage({ text: "three" });
    const after = await stored(name, ORDERED);
    expect(after.map((message) => textOf(message)).slice(0, 3)).toEqual(["one", textOf(transcript[1]), "three"]);
    for (const tab of [a, b, c]) await vi.waitFor(() => expect(shape(tab.chat.messages.value)).toEqual(shape(after)));
    for (const tab of [a, b, c]) tab.unmount();
  });

  it("adds and updates only on a stock agent: it keeps the rest, and each tab's next read shows them again", async () => {
    const name = uniqueName("stock-set-remove");
    const a = openWatched(name, STOCK_AGENT);
    const transcript = await twoTurns(name, a, STOCK_AGENT);
    const b = openWatched(name, STOCK_AGENT);
    await b.chat;
    await vi.waitFor(() => expect(shape(b.chat.messages.value)).toEqual(shape(transcript)));

    a.chat.setMessages((current) => current.slice(0, 2));
    // The other tab is sent the list as it came, and shows it.
    await vi.waitFor(() => expect(shape(b.chat.messages.value)).toEqual(shape(transcript.slice(0, 2))));
    expect(shape(a.chat.messages.value)).toEqual(shape(transcript.slice(0, 2)));
    // The agent keeps all four, and no frame carries a version.
    expect(shape(await stored(name, STOCK_AGENT))).toEqual(shape(transcript));
    expect(a.versions()).toEqual([]);
    // A reconnect reads the stored transcript (resyncOnReconnect): both tabs show the four again.
    expect((await post(name, "close-connections", {}, STOCK_AGENT)).status).toBe(200);
    for (const tab of [a, b]) {
      await vi.waitFor(() => expect(shape(tab.chat.messages.value)).toEqual(shape(transcript)), { timeout: 20_000 });
    }
    a.unmount();
    b.unmount();
  });
});
