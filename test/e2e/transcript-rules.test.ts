/**
 * What the screen holds against the real `AIChatAgent` when the server
 * refuses a message, when the transcript read has no address yet or must not
 * happen, when a read is older than this client's clear, and when a reply
 * streams without a `start` chunk (issues 21 and 22).
 */
import { AgentClient } from "agents/client";
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { watch } from "vue";
import type { AgentSocket, ChatTurnEndEvent, OnToolCallCallback } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { expectScreenIsStored, openTracked, whenOpen, whenSettled } from "../support/chat";
import {
  onStockAgent,
  runAgent,
  agentHost,
  agentUrl,
  post,
  readLog,
  stored,
  textOf,
  uniqueName,
  waitForLog
} from "../support/e2e";

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.restoreAllMocks();
});

const open = (name: string, options: Parameters<typeof openTracked>[2] = {}) => openTracked(cleanup, name, options);

function connect(name: string, agent = runAgent()) {
  const client = new AgentClient({ agent, host: agentHost(), name });
  cleanup.push(() => client.close());
  return client;
}

const texts = (messages: readonly UIMessage[]) => messages.map(textOf);
const reads = async (name: string, agent = runAgent()) =>
  (await readLog(name, agent)).filter((entry) => entry.kind === "get-messages");

/** `@cloudflare/ai-chat` before 0.12.2 (the compat tier's lowest row) ends turns with neither an outcome nor `messageIds`. */
const olderServer = (ends: readonly ChatTurnEndEvent[]) => ends.every((event) => event.messageIds === undefined);

describe("a message the server refused leaves the screen (issue 21, 3)", () => {
  const DROP = "DropChatAgent";

  it("messageConcurrency 'drop': a message sent while this tab's reply streams ends skipped and is not shown", async () => {
    const name = uniqueName("dropown");
    const ends: ChatTurnEndEvent[] = [];
    const { chat } = open(name, {
      client: { agent: DROP, host: agentHost(), name },
      body: { script: { chunks: 40, chunkDelayMs: 30 } },
      onTurnEnd: (event) => ends.push(event)
    });
    await chat.ready;
    void chat.sendMessage({ text: "first" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(expectedText(3).length));
    void chat.sendMessage({ text: "refused" });
    await vi.waitFor(() => expect(ends.length).toBeGreaterThanOrEqual(2), { timeout: 15_000 });
    await whenSettled(chat);
    // @cloudflare/ai-chat before 0.12.2 names no outcome (docs/versions.md): a refusal
    // cannot be told from a reply, so the message stays on screen.
    const older = olderServer(ends);
    expect(ends.map((event) => event.outcome).includes("skipped")).toBe(!older);
    expect(texts(chat.messages.value).includes("refused")).toBe(older);
    if (older) return;
    expect(ends.map((event) => event.outcome)).toContain("completed");
    expect(texts(chat.messages.value)).not.toContain("refused");
    await expectScreenIsStored(chat, name, DROP);
    expect(texts(await stored(name, DROP))).toEqual(["first", expectedText(40)]);
  });

  it("messageConcurrency 'drop': a message sent from the queue after a reconnect while a server turn runs is not shown", async () => {
    const name = uniqueName("dropqueued");
    const client = connect(name, DROP);
    const ends: ChatTurnEndEvent[] = [];
    const { chat } = open(name, { client: undefined, agent: client, resume: false, onTurnEnd: (event) => ends.push(event) });
    await chat.ready;
    await whenOpen(chat);
    client.close();
    await vi.waitFor(() => expect(chat.connectionStatus.value).not.toBe("open"));
    void chat.sendMessage({ text: "queued" });
    await vi.waitFor(() => expect(chat.queuedMessages.value).toHaveLength(1));
    const turn = await post(name, "server-turn", { text: "scheduled", script: { chunks: 60, chunkDelayMs: 40 } }, DROP);
    expect(turn.status).toBe(202);
    await waitForLog(name, (entry) => entry.kind === "chat-message", { agent: DROP });
    client.reconnect();
    await vi.waitFor(() => expect(ends.length).toBeGreaterThanOrEqual(1), { timeout: 15_000 });
    await waitForLog(name, (entry) => entry.kind === "turn-finished", { agent: DROP });
    await whenSettled(chat);
    // Before 0.12.2 (no outcome) the refusal is not recognised; the transcript frame that follows decides.
    const older = olderServer(ends);
    expect(ends.map((event) => event.outcome).includes("skipped")).toBe(!older);
    expect(!older && texts(chat.messages.value).includes("queued")).toBe(false);
    await expectScreenIsStored(chat, name, DROP);
  });
});

/**
 * A socket that does not name its address at first (a third-party socket, or
 * one whose address is still pending), then does once `known()` is called.
 */
function addressLater(client: AgentClient) {
  let known = false;
  const socket: AgentSocket & { getHttpUrl(): string; agent: string; name: string; _pk: string } = {
    send: (data) => client.send(data),
    addEventListener: (type, listener, options) => client.addEventListener(type, listener as EventListener, options as AddEventListenerOptions),
    removeEventListener: (type, listener) => client.removeEventListener(type, listener as EventListener),
    get readyState() {
      return client.readyState;
    },
    get connectionError() {
      return client.connectionError;
    },
    close: (code, reason) => client.close(code, reason),
    reconnect: (code, reason) => client.reconnect(code, reason),
    getHttpUrl: () => (known ? client._pkurl.replace(/^ws/, "http") : ""),
    agent: client.agent,
    name: client.name,
    _pk: client._pk
  };
  return { socket, known: () => (known = true) };
}

async function seedHistory(name: string) {
  const seeder = open(name);
  await seeder.chat.ready;
  await seeder.chat.sendMessage({ text: "history" });
  await whenSettled(seeder.chat);
  seeder.unmount();
}

// Upstream #1356 (fixed by #1358): a socket with no address yet (getHttpUrl() "") must not break the first render.
describe("the transcript is read once a shared socket names its address (issue 21, 7)", () => {
  // HTTP reads: an ordered agent pushes the transcript on the socket instead.
  onStockAgent();
  it("a socket whose address is unknown at mount and known by the time it opens: the history is read", async () => {
    const name = uniqueName("lateaddress");
    await seedHistory(name);
    const client = new AgentClient({ agent: runAgent(), host: agentHost(), name, startClosed: true });
    cleanup.push(() => client.close());
    const late = addressLater(client);
    const { chat } = open(name, { client: undefined, agent: late.socket });
    late.known();
    client.reconnect();
    await whenOpen(chat);
    await chat.ready;
    await vi.waitFor(() => expect(texts(chat.messages.value)).toEqual(["history", expectedText(5)]));
    await expectScreenIsStored(chat, name);
  });

  it("a socket that names its address only after it opened: the history is read then, and a message sent meanwhile stays", async () => {
    const name = uniqueName("pendingaddress");
    await seedHistory(name);
    const late = addressLater(connect(name));
    const { chat } = open(name, { client: undefined, agent: late.socket });
    await whenOpen(chat);
    expect(chat.isLoading.value).toBe(false);
    await chat.sendMessage({ text: "meanwhile" });
    await whenSettled(chat);
    late.known();
    await chat.sendMessage({ text: "after" });
    await whenSettled(chat);
    await vi.waitFor(() =>
      expect(texts(chat.messages.value)).toEqual(["history", expectedText(5), "meanwhile", expectedText(5), "after", expectedText(5)])
    );
    await expectScreenIsStored(chat, name);
    expect(await reads(name)).toHaveLength(2);
  });
});

describe("getInitialMessages: null reads nothing, ever (issue 21, 8)", () => {
  it("no /get-messages read on the first open, after a reconnect, or after a clear another client made", async () => {
    const name = uniqueName("nullreads");
    const client = connect(name);
    const { chat } = open(name, { client: undefined, agent: client, getInitialMessages: null });
    await whenOpen(chat);
    await chat.sendMessage({ text: "one" });
    await whenSettled(chat);
    client.reconnect();
    await vi.waitFor(() => expect(chat.connectionStatus.value).not.toBe("open"));
    await whenOpen(chat);
    await chat.sendMessage({ text: "two" });
    await whenSettled(chat);
    const other = connect(name);
    await vi.waitFor(() => expect(other.readyState).toBe(WebSocket.OPEN));
    other.send(JSON.stringify({ type: "cf_agent_chat_clear" }));
    await vi.waitFor(() => expect(chat.messages.value).toEqual([]));
    await chat.sendMessage({ text: "three" });
    await whenSettled(chat);
    expect(texts(chat.messages.value)).toEqual(["three", expectedText(5)]);
    expect(await reads(name)).toEqual([]);
  });
});

/** A client tool without `execute` the model calls; onToolCall records each call and never answers. */
function pendingClientCall() {
  const calls: string[] = [];
  const onToolCall: OnToolCallCallback = ({ toolCall }) => {
    calls.push(toolCall.toolCallId);
  };
  return {
    calls,
    onToolCall,
    body: { script: { toolCalls: [{ toolName: "askUser", input: { question: "ready?" } }] } }
  };
}

describe("a read older than this client's clear brings nothing back (issue 21, 9)", () => {
  // HTTP reads: an ordered agent pushes the transcript on the socket instead.
  onStockAgent();
  it("a caching getInitialMessages answers the read after the clear with the old transcript: the screen stays empty, the tool call runs once", async () => {
    const name = uniqueName("staleloader");
    const tool = pendingClientCall();
    let cached: UIMessage[] | null = null;
    const answers: Array<Promise<UIMessage[]>> = [];
    const { chat } = open(name, {
      onToolCall: tool.onToolCall,
      body: tool.body,
      getInitialMessages: () => {
        const answer = cached
          ? Promise.resolve(structuredClone(cached))
          : fetch(`${agentUrl(name)}/get-messages`).then((response) => response.json() as Promise<UIMessage[]>);
        answers.push(answer);
        return answer;
      }
    });
    await chat.ready;
    await chat.sendMessage({ text: "ask me" });
    await vi.waitFor(() => expect(tool.calls).toHaveLength(1));
    cached = await stored(name);
    expect(cached).toHaveLength(2);

    chat.clearHistory();
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    await answers[1];
    await new Promise((resolve) => setTimeout(resolve, 0));
    await whenSettled(chat);
    expect(chat.messages.value).toEqual([]);
    expect(tool.calls).toHaveLength(1);
    await vi.waitFor(async () => expect(await stored(name)).toEqual([]));
  });

  it("the clear reaches the agent after the read it triggers (a delayed clear): the screen stays empty, the tool call runs once", async () => {
    const name = uniqueName("delayedclear");
    const tool = pendingClientCall();
    const client = connect(name);
    const send = client.send.bind(client);
    client.send = (data: Parameters<typeof send>[0]) => {
      if (typeof data === "string" && data.includes('"cf_agent_chat_clear"')) {
        setTimeout(() => send(data), 400);
        return true;
      }
      return send(data);
    };
    const answered: Array<Promise<unknown>> = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const response = realFetch(input, init);
      if (String(input instanceof Request ? input.url : input).endsWith(`/${name}/get-messages`)) {
        answered.push(response.then((r) => r.clone().text()));
      }
      return response;
    });
    const { chat } = open(name, { client: undefined, agent: client, onToolCall: tool.onToolCall, body: tool.body });
    await chat.ready;
    await chat.sendMessage({ text: "ask me" });
    await vi.waitFor(() => expect(tool.calls).toHaveLength(1));
    const before = answered.length;

    chat.clearHistory();
    await vi.waitFor(() => expect(answered.length).toBe(before + 1));
    await answered[before];
    await new Promise((resolve) => setTimeout(resolve, 0));
    await waitForLog(name, (entry) => entry.type === "cf_agent_chat_clear");
    await whenSettled(chat);
    expect(chat.messages.value).toEqual([]);
    expect(tool.calls).toHaveLength(1);
    await vi.waitFor(async () => expect(await stored(name)).toEqual([]));
  });
});

describe("a reply streamed without a start chunk is protected and ends as stored (issue 22, 1)", () => {
  const PLAIN = "PlainTextChatAgent";

  it("a plain-text Response, with another client's turn broadcasting mid-stream and between its last chunk and done, 20 times: screen equals store", async () => {
    const mismatches: string[] = [];
    for (let round = 0; round < 20; round++) {
      const name = uniqueName(`plain${round}`);
      const { chat, unmount } = open(name, {
        client: { agent: PLAIN, host: agentHost(), name },
        body: { script: { chunks: 10, chunkDelayMs: 50, holdBeforeEndMs: 500 } }
      });
      const watcher = open(name, { client: { agent: PLAIN, host: agentHost(), name } });
      const other = connect(name, PLAIN);
      await Promise.all([chat.ready, watcher.chat.ready]);
      await vi.waitFor(() => expect(other.readyState).toBe(WebSocket.OPEN));
      /** Another client's turn: the server broadcasts its messages at once, and runs it (silently) after this one. */
      const otherTurn = async (text: string) => {
        const messages = [...(await stored(name, PLAIN)), { id: `${text}-${round}`, role: "user", parts: [{ type: "text", text }] }];
        other.send(
          JSON.stringify({
            type: "cf_agent_use_chat_request",
            id: `${text}-${round}`,
            init: { method: "POST", body: JSON.stringify({ messages, trigger: "submit-message", script: { silent: true } }) }
          })
        );
      };
      // Once the reply shows, it must never disappear while it streams.
      let shown = false;
      let hidden = 0;
      const stopWatching = watch(
        chat.messages,
        (messages) => {
          const replies = messages.filter((message) => message.role === "assistant").length;
          if (replies > 0) shown = true;
          else if (shown) hidden++;
        },
        { flush: "sync" }
      );
      void chat.sendMessage({ text: "tell me" });
      await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(expectedText(3).length));
      await otherTurn("mid-stream");
      await waitForLog(name, (entry) => entry.kind === "plain-last-chunk", { agent: PLAIN });
      await otherTurn("before-done");
      await vi.waitFor(async () => {
        expect((await readLog(name, PLAIN)).filter((entry) => entry.kind === "turn-finished")).toHaveLength(3);
      });
      await whenSettled(chat);
      await whenSettled(watcher.chat);
      stopWatching();
      if (hidden > 0) mismatches.push(`round ${round}, sender: the streaming reply disappeared ${hidden} time(s)`);
      for (const [who, tab] of [["sender", chat], ["watcher", watcher.chat]] as const) {
        try {
          await expectScreenIsStored(tab, name, PLAIN, 3_000);
        } catch {
          mismatches.push(
            `round ${round}, ${who}: screen ${JSON.stringify(texts(tab.messages.value))}, stored ${JSON.stringify(texts(await stored(name, PLAIN)))}`
          );
        }
      }
      unmount();
      watcher.unmount();
      other.close();
    }
    expect(mismatches).toEqual([]);
  }, 240_000);
});

describe("this tab's question stays before its reply when a frame without it arrives mid-reply (issue 29, 6)", () => {
  // The frame here is the list another client's request carries, which `AIChatAgent` broadcasts as it came.
  // An ordered agent (exact sync) stamps that list with a version and sends the sender the same list, so the
  // sender's question is confirmed before it and the frame is the server's word there: this is the stock agent's case.
  onStockAgent();

  it("another client's request built before this tab's question arrived: question, reply, theirs, each time the screen changes", async () => {
    const name = uniqueName("midorder");
    const { chat } = open(name, { body: { script: { chunks: 60, chunkDelayMs: 30 } } });
    await chat.ready;
    const other = connect(name);
    await vi.waitFor(() => expect(other.readyState).toBe(WebSocket.OPEN));
    // Every screen from the frame's arrival until the end: this tab's question must come before this tab's reply.
    const misordered: string[] = [];
    let theirsSeen = false;
    let streamingWhenSeen = false;
    const stopWatching = watch(
      chat.messages,
      (messages) => {
        if (!messages.some((message) => message.id === "theirs-1")) return;
        if (!theirsSeen) streamingWhenSeen = chat.isStreaming.value;
        theirsSeen = true;
        const question = messages.findIndex((message) => textOf(message) === "mine");
        const reply = messages.findIndex((message, index) => index > 0 && message.role === "assistant" && message.id !== "theirs-1");
        if (question < 0 || reply < 0 || question > reply) misordered.push(JSON.stringify(texts(messages)));
      },
      { flush: "sync" }
    );
    void chat.sendMessage({ text: "mine" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(expectedText(3).length));
    // A list that lacks this tab's question (another tab built it before the broadcast of "mine" reached it).
    other.send(
      JSON.stringify({
        type: "cf_agent_use_chat_request",
        id: "theirs-req",
        init: {
          method: "POST",
          body: JSON.stringify({
            messages: [{ id: "theirs-1", role: "user", parts: [{ type: "text", text: "theirs" }] }],
            trigger: "submit-message",
            script: { chunks: 3 }
          })
        }
      })
    );
    // The frame reached the chat while its own reply still streamed.
    await vi.waitFor(() => expect(theirsSeen).toBe(true));
    expect(streamingWhenSeen).toBe(true);
    expect(chat.messages.value.at(-1)?.role).toBe("assistant");
    expect(texts(chat.messages.value).slice(0, 2)).toEqual(["theirs", "mine"]);
    // The other request's turn runs after this one; this tab watches it.
    await vi.waitFor(() => expect(texts(chat.messages.value).at(-1)).toBe(expectedText(3)), { timeout: 15_000 });
    await whenSettled(chat);
    stopWatching();
    expect(misordered).toEqual([]);
    await expectScreenIsStored(chat, name);
    expect(texts(chat.messages.value)).toEqual(["mine", "theirs", expectedText(60), expectedText(3)]);
  });
});
