/**
 * Issue 32: a chat that survives the tab (`persist`). Real Chromium (real
 * IndexedDB, Web Locks, BroadcastChannel) against a real `AIChatAgent` in a
 * `wrangler dev` this file takes down and brings back (outage-commands.ts).
 * A "reload" unmounts the app and mounts a new one with a new persistence
 * object over the same database: the new page shares nothing with the old
 * one but what the browser stored. A "tab" is one such app; tabs of the
 * same origin share IndexedDB and Web Locks whether they are pages or apps.
 */
import type { UIMessage } from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { commands } from "vitest/browser";
import { createApp, defineComponent, h, onMounted, ref } from "vue";
import { type UseAgentChatOptions, type UseAgentChatReturn, useAgentChat } from "../../src";
import { indexedDBPersistence, indexedDBStore } from "../../src/persist";
import { expectedText } from "../fixtures/worker/src/script";
import { whenSettled } from "../support/chat";
import { CHAT_AGENT, CHAT_AGENT_PATH, type LogEntry, agentHost, shape, textOf, uniqueName } from "../support/e2e";
import { mountComposable } from "../support/mount";

type Chat = UseAgentChatReturn<UIMessage>;

let server: { host: string; origin: string };
const cleanup: Array<() => void> = [];

beforeAll(async () => {
  server = await commands.outageServerStart();
}, 120_000);

afterEach(() => {
  for (const run of cleanup.splice(0).toReversed()) run();
});

afterAll(async () => {
  await commands.outageServerStop();
}, 60_000);

const down = () => commands.outageServerDown();
const back = async () => {
  server = await commands.outageServerResume();
};

const at = (name: string, route: string) => `${server.origin}/agents/${CHAT_AGENT_PATH}/${encodeURIComponent(name)}/${route}`;
async function storedAt(name: string): Promise<UIMessage[]> {
  const response = await fetch(at(name, "stored"));
  expect(response.ok).toBe(true);
  return (await response.json()) as UIMessage[];
}
async function requestsAt(name: string): Promise<LogEntry[]> {
  const response = await fetch(at(name, "log"));
  expect(response.ok).toBe(true);
  const { entries } = (await response.json()) as { entries: LogEntry[] };
  return entries.filter((entry) => entry.kind === "frame" && entry.type === "cf_agent_use_chat_request");
}

/** Fast reconnects: the agent comes back within seconds, and the test should not wait out a long backoff. */
const clientOf = (name: string) => ({
  agent: CHAT_AGENT,
  host: server.host,
  name,
  minReconnectionDelay: 100,
  maxReconnectionDelay: 400
});

/** One "tab": a mounted chat with `persist` over the database `db`, unmounted after the test. */
function openTab(name: string, db: string, extra: Partial<UseAgentChatOptions> = {}) {
  const persist = indexedDBPersistence({ databaseName: db });
  const mounted = mountComposable(() => useAgentChat({ client: clientOf(name), persist, ...extra }));
  let open = true;
  const close = () => {
    if (open) mounted.unmount();
    open = false;
  };
  cleanup.push(close);
  return { chat: mounted.result, close, persist };
}

/** The persisted records of the database `db`, by kind (`t:` transcripts, `q:` queued sends). */
async function records(db: string, kind: "t" | "q"): Promise<unknown[]> {
  const store = indexedDBStore(db);
  const keys = (await store.keys()).filter((key) => key.startsWith(`${kind}:`));
  return Promise.all(keys.map((key) => store.get(key)));
}

const databases = async () => (await indexedDB.databases()).map((database) => database.name).toSorted();
const texts = (messages: readonly UIMessage[]) => messages.map((message) => textOf(message));

async function whenDown(chat: Chat) {
  await vi.waitFor(() => expect(chat.connectionStatus.value).not.toBe("open"), { timeout: 20_000 });
}

/** Sends a first message and waits until its answered transcript is cached. */
async function startConversation(chat: Chat, db: string, text: string) {
  await chat.ready;
  await chat.sendMessage({ text });
  await whenSettled(chat);
  await vi.waitFor(async () => {
    const cached = (await records(db, "t")) as Array<{ messages: UIMessage[] }>;
    expect(cached.map((record) => texts(record.messages))).toEqual([[text, expectedText(5)]]);
  });
}

// First in the file: no session of another test holds or waits for a lock yet.
/** Two tabs of one conversation (one exchange done), then the agent goes down and tab A queues `text` (stored). */
async function twoTabsQueueWhileDown(label: string, text: string) {
  const name = uniqueName(label);
  const db = uniqueName("db");
  const a = openTab(name, db);
  await startConversation(a.chat, db, "hello");
  const b = openTab(name, db);
  await vi.waitFor(() => expect(texts(b.chat.messages.value)).toEqual(["hello", expectedText(5)]));

  await down();
  await whenDown(a.chat);
  void a.chat.sendMessage({ text });
  await vi.waitFor(async () => expect(await records(db, "q")).toHaveLength(1));
  return { name, db, a, b, queuedId: a.chat.queuedMessages.value[0]!.id };
}

describe("without persist (issue 32)", () => {
  it("nothing is written: no database, no Web Lock, no storage key", async () => {
    const before = await databases();
    const storageBefore = [localStorage.length, sessionStorage.length];
    const name = uniqueName("no-persist");
    const { result: chat, unmount } = mountComposable(() =>
      useAgentChat({ client: { agent: CHAT_AGENT, host: agentHost(), name } })
    );
    cleanup.push(unmount);
    await chat.ready;
    await chat.sendMessage({ text: "nothing to keep" });
    await whenSettled(chat);
    chat.clearHistory();
    await vi.waitFor(() => expect(chat.messages.value).toEqual([]));
    unmount();
    expect(await databases()).toEqual(before);
    expect(before).not.toContain("agents-vue");
    expect([localStorage.length, sessionStorage.length]).toEqual(storageBefore);
    const locks = await navigator.locks.query();
    expect([...(locks.held ?? []), ...(locks.pending ?? [])].filter((lock) => lock.name?.startsWith("agents-vue"))).toEqual([]);
    expect(chat.isCached.value).toBe(false);
  });
});

describe("persist: sends that outlive the tab (issue 32)", () => {
  it("send while the agent is down, reload, bring it back: shown as queued after the reload, delivered and answered once", async () => {
    const name = uniqueName("persist-reload");
    const db = uniqueName("db");
    const first = openTab(name, db);
    await startConversation(first.chat, db, "before the outage");

    await down();
    await whenDown(first.chat);
    void first.chat.sendMessage({ text: "sent while down" });
    await vi.waitFor(() => expect(texts(first.chat.queuedMessages.value)).toEqual(["sent while down"]));
    const queuedId = first.chat.queuedMessages.value[0]!.id;
    // Stored as soon as it is queued.
    await vi.waitFor(async () => expect(await records(db, "q")).toHaveLength(1));
    first.close();

    const second = openTab(name, db);
    // The cached transcript and the queued send are on screen while the agent is still down.
    await vi.waitFor(() => {
      expect(texts(second.chat.messages.value)).toEqual(["before the outage", expectedText(5), "sent while down"]);
      expect(second.chat.queuedMessages.value.map((message) => message.id)).toEqual([queuedId]);
    });
    expect(second.chat.isCached.value).toBe(true);
    expect(second.chat.connectionStatus.value).not.toBe("open");

    await back();
    await vi.waitFor(() => expect(second.chat.connectionStatus.value).toBe("open"), { timeout: 30_000 });
    await whenSettled(second.chat, 30_000);
    const expected = ["before the outage", expectedText(5), "sent while down", expectedText(5)];
    expect(texts(second.chat.messages.value)).toEqual(expected);
    expect(second.chat.isCached.value).toBe(false);
    const stored = await storedAt(name);
    expect(texts(stored)).toEqual(expected);
    expect(stored.filter((message) => message.id === queuedId)).toHaveLength(1);
    expect(shape(second.chat.messages.value)).toEqual(shape(stored));
    // Exactly one request sent it (each request carries the whole transcript: the one that sent it ends with it).
    expect((await requestsAt(name)).filter((entry) => (entry.messageIds as string[]).at(-1) === queuedId)).toHaveLength(1);
    // Delivered: the stored send is gone.
    await vi.waitFor(async () => expect(await records(db, "q")).toEqual([]));
  }, 120_000);

  it("two tabs open at the reload: one of them delivers the queued send, once", async () => {
    const { name, db, a, b, queuedId } = await twoTabsQueueWhileDown("persist-two-tabs", "queued in tab A");
    // Both tabs reload.
    a.close();
    b.close();
    const a2 = openTab(name, db);
    const b2 = openTab(name, db);
    // One tab owns the send: it shows there as queued, and not in the other.
    await vi.waitFor(() => {
      const owners = [a2, b2].filter((tab) => texts(tab.chat.queuedMessages.value).includes("queued in tab A"));
      expect(owners).toHaveLength(1);
    });

    await back();
    for (const tab of [a2, b2]) await whenSettled(tab.chat, 30_000);
    const expected = ["hello", expectedText(5), "queued in tab A", expectedText(5)];
    await vi.waitFor(async () => expect(texts(await storedAt(name))).toEqual(expected), { timeout: 15_000 });
    for (const tab of [a2, b2]) await vi.waitFor(() => expect(texts(tab.chat.messages.value)).toEqual(expected), { timeout: 15_000 });
    // Exactly one request sent it, from one of the two tabs.
    expect((await requestsAt(name)).filter((entry) => (entry.messageIds as string[]).at(-1) === queuedId)).toHaveLength(1);
    await vi.waitFor(async () => expect(await records(db, "q")).toEqual([]));
  }, 120_000);

  it("the tab that queued it is never opened again: another open tab of the conversation delivers it, once", async () => {
    const { name, db, a, b } = await twoTabsQueueWhileDown("persist-orphan", "left behind");
    // Tab B does not take a send whose tab is alive.
    expect(b.chat.queuedMessages.value).toEqual([]);
    a.close();
    await vi.waitFor(() => expect(texts(b.chat.queuedMessages.value)).toEqual(["left behind"]));

    await back();
    await whenSettled(b.chat, 30_000);
    const expected = ["hello", expectedText(5), "left behind", expectedText(5)];
    expect(texts(b.chat.messages.value)).toEqual(expected);
    expect(texts(await storedAt(name))).toEqual(expected);
    await vi.waitFor(async () => expect(await records(db, "q")).toEqual([]));
  }, 120_000);
});

describe("persist: instant reload (issue 32)", () => {
  it("reload with the agent down: the cached transcript is on screen within one animation frame of mount, flagged cached; it reconciles when the agent is back", async () => {
    const name = uniqueName("persist-cache");
    const db = uniqueName("db");
    const first = openTab(name, db);
    await startConversation(first.chat, db, "cached question");
    first.close();

    // Meanwhile another client changes the conversation: the cached copy is now stale.
    const other = mountComposable(() => useAgentChat({ client: clientOf(name) }));
    cleanup.push(other.unmount);
    await other.result.ready;
    await vi.waitFor(() => expect(other.result.messages.value).toHaveLength(2));
    other.result.clearHistory();
    await vi.waitFor(async () => expect(await storedAt(name)).toEqual([]));
    await other.result.sendMessage({ text: "newer question" });
    await whenSettled(other.result);
    await vi.waitFor(async () => expect(texts(await storedAt(name))).toEqual(["newer question", expectedText(5)]));
    other.unmount();

    await down();
    // A new page: a new persistence object (its database not open yet); the app mounts once it has read the cache.
    const persist = indexedDBPersistence({ databaseName: db });
    await persist.ready;
    let chat!: Chat;
    let mountedAt = 0;
    const inFirstFrame = new Promise<{ texts: string[]; cached: boolean; ms: number }>((resolve) => {
      const host = document.createElement("div");
      document.body.appendChild(host);
      const app = createApp(
        defineComponent({
          setup() {
            chat = useAgentChat({ client: clientOf(name), persist });
            onMounted(() => {
              mountedAt = performance.now();
              // The frame after mount: what the user sees first.
              requestAnimationFrame(() =>
                resolve({ texts: texts(chat.messages.value), cached: chat.isCached.value, ms: performance.now() - mountedAt })
              );
            });
            return () => h("ul", chat.messages.value.map((message) => h("li", textOf(message))));
          }
        })
      );
      app.mount(host);
      cleanup.push(() => {
        app.unmount();
        host.remove();
      });
    });
    const seen = await inFirstFrame;
    expect(seen.texts).toEqual(["cached question", expectedText(5)]);
    expect(seen.cached).toBe(true);
    expect(chat.isLoading.value).toBe(true);
    expect(chat.connectionStatus.value).not.toBe("open");

    await back();
    await vi.waitFor(() => expect(chat.isCached.value).toBe(false), { timeout: 30_000 });
    await whenSettled(chat, 30_000);
    // The cached messages the agent no longer holds went; the screen is what it stores.
    const stored = await storedAt(name);
    expect(texts(stored)).toEqual(["newer question", expectedText(5)]);
    expect(shape(chat.messages.value)).toEqual(shape(stored));
    // And the cache follows.
    await vi.waitFor(async () => {
      const cached = (await records(db, "t")) as Array<{ messages: UIMessage[] }>;
      expect(cached.map((record) => texts(record.messages))).toEqual([["newer question", expectedText(5)]]);
    });
  }, 120_000);
});

describe("persist: a conversation switch (issue 32)", () => {
  it("switching conversations with the agent down shows the other conversation's kept copy, then its stored transcript", async () => {
    const [nameA, nameB] = [uniqueName("persist-a"), uniqueName("persist-b")];
    const db = uniqueName("db");
    const a = openTab(nameA, db);
    await startConversation(a.chat, db, "in A");
    a.close();
    const b = openTab(nameB, db);
    await b.chat.ready;
    await b.chat.sendMessage({ text: "in B" });
    await whenSettled(b.chat);
    await vi.waitFor(async () => expect(await records(db, "t")).toHaveLength(2));
    b.close();

    await down();
    const persist = indexedDBPersistence({ databaseName: db });
    await persist.ready;
    const name = ref(nameA);
    const mounted = mountComposable(() => useAgentChat({ client: { ...clientOf(nameA), name }, persist }));
    cleanup.push(mounted.unmount);
    const chat = mounted.result;
    expect(texts(chat.messages.value)).toEqual(["in A", expectedText(5)]);
    expect(chat.isCached.value).toBe(true);
    name.value = nameB;
    await vi.waitFor(() => expect(texts(chat.messages.value)).toEqual(["in B", expectedText(5)]));
    expect(chat.isCached.value).toBe(true);

    await back();
    await vi.waitFor(() => expect(chat.isCached.value).toBe(false), { timeout: 30_000 });
    await whenSettled(chat, 30_000);
    expect(shape(chat.messages.value)).toEqual(shape(await storedAt(nameB)));
    // Each conversation kept its own copy.
    const kept = (await records(db, "t")) as Array<{ messages: UIMessage[] }>;
    expect(kept.map((record) => texts(record.messages)[0]).toSorted()).toEqual(["in A", "in B"]);
  }, 120_000);
});
