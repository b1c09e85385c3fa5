import { AgentClient } from "agents/client";
import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { openChat, whenOpen, whenSettled } from "../support/chat";
import { CHAT_AGENT, agentHost, post, readLog, stored, textOf, uniqueName, waitForLog } from "../support/e2e";
import { mountComposable } from "../support/mount";

const textParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((part) => part.type === "text");

function expectOneCompleteReply(messages: readonly UIMessage[], chunks: number) {
  expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  expect(textParts(messages[1])).toHaveLength(1);
  expect(textOf(messages[1])).toBe(expectedText(chunks));
}

describe("resume", () => {
  it("unmount at a third of a 40-chunk reply and mount again: the whole reply, once, in one text part", async () => {
    const name = uniqueName("resume");
    const script = { chunks: 40, chunkDelayMs: 40 };
    const first = openChat(name, { body: { script } });
    await first.chat.ready;
    void first.chat.sendMessage({ text: "tell me a long story" });
    await vi.waitFor(() => expect(textOf(first.chat.messages.value[1]).length).toBeGreaterThan(expectedText(13).length));
    first.unmount();

    const second = openChat(name, { body: { script } });
    await vi.waitFor(() => expect(textOf(second.chat.messages.value[1])).toBe(expectedText(40)), { timeout: 15_000 });
    await whenSettled(second.chat);
    expectOneCompleteReply(second.chat.messages.value, 40);
    expect((await readLog(name)).filter((entry) => entry.kind === "abort")).toHaveLength(0);
    second.unmount();
  });

  it("reload while a short reply streams, 20 times: the reply always ends complete", async () => {
    const script = { chunks: 20, chunkDelayMs: 25 };
    for (let round = 0; round < 20; round++) {
      const name = uniqueName(`reload${round}`);
      const first = openChat(name, { body: { script } });
      await first.chat.ready;
      void first.chat.sendMessage({ text: `round ${round}` });
      // Reload at a different point of the ~0.5 s reply each round.
      await new Promise((resolve) => setTimeout(resolve, 25 + round * 24));
      first.unmount();
      const second = openChat(name, { body: { script } });
      await vi.waitFor(() => expect(textOf(second.chat.messages.value[1])).toBe(expectedText(20)), {
        timeout: 15_000
      });
      await whenSettled(second.chat);
      expectOneCompleteReply(second.chat.messages.value, 20);
      second.unmount();
    }
  }, 240_000);

  it("three socket drops in one turn: the reply ends complete; one ACK per offer per socket", async () => {
    const name = uniqueName("drops");
    const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
    const { chat, unmount } = openChat(name, { client: undefined, agent: client, body: { script: { chunks: 60, chunkDelayMs: 40 } } });
    await chat.ready;
    void chat.sendMessage({ text: "survive this" });
    for (const cut of [10, 25, 40]) {
      await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThanOrEqual(expectedText(cut).length), {
        timeout: 15_000
      });
      client.reconnect();
    }
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(expectedText(60)), { timeout: 20_000 });
    await whenSettled(chat);
    expectOneCompleteReply(chat.messages.value, 60);
    const log = await readLog(name);
    // PartySocket reuses its connection id across reconnects: a `connect` entry starts a new socket.
    const acksPerSocket: number[] = [];
    for (const entry of log) {
      if (entry.kind === "connect") acksPerSocket.push(0);
      else if (entry.type === "cf_agent_stream_resume_ack") acksPerSocket[acksPerSocket.length - 1]!++;
    }
    expect(acksPerSocket).toEqual([0, 1, 1, 1]);
    expect(log.filter((entry) => entry.kind === "abort")).toHaveLength(0);
    unmount();
    client.close();
  });
});

const isResponse = (event: Event) => String((event as MessageEvent).data).includes('"type":"cf_agent_use_chat_response"');

describe("a chat's own socket hands it its frames directly", () => {
  it("response frames skip PartySocket's event copies, yet a listener added to client sees every one", async () => {
    const name = uniqueName("lane");
    const { chat, unmount } = openChat(name, { body: { script: { chunks: 30, chunkDelayMs: 0 } } });
    await chat.ready;
    const socket = chat.client.value as unknown as EventTarget;
    let dispatched = 0;
    const dispatch = socket.dispatchEvent.bind(socket);
    socket.dispatchEvent = (event: Event) => {
      if (event.type === "message" && isResponse(event)) dispatched++;
      return dispatch(event);
    };
    await chat.sendMessage({ text: "first" });
    await whenSettled(chat);
    expect(textOf(chat.messages.value[1])).toBe(expectedText(30));
    expect(dispatched).toBe(0);

    let heard = 0;
    socket.addEventListener("message", (event) => void (isResponse(event) && heard++));
    await chat.sendMessage({ text: "second" });
    await whenSettled(chat);
    expect(textOf(chat.messages.value[3])).toBe(expectedText(30));
    expect(heard).toBeGreaterThanOrEqual(32);
    expect(dispatched).toBe(heard);
    unmount();
  });
});

describe("a socket the server closes mid-reply (issue 28)", () => {
  for (const tabs of [1, 2]) {
    it(`the reply ends complete on ${tabs === 1 ? "the sending tab" : "both tabs"}, and the sender's status is ready with no error`, async () => {
      const name = uniqueName("cut");
      const chunks = 30;
      const sender = openChat(name, { body: { script: { chunks, chunkDelayMs: 40 } } });
      const watcher = tabs === 2 ? openChat(name) : undefined;
      await sender.chat.ready;
      await watcher?.chat.ready;
      void sender.chat.sendMessage({ text: "survive a cut" });
      await vi.waitFor(() => expect(textOf(sender.chat.messages.value[1]).length).toBeGreaterThanOrEqual(expectedText(8).length), {
        timeout: 15_000
      });
      // The server drops every socket (1011); the client reconnects after its backoff, by when the reply may have ended.
      expect((await (await post(name, "close-connections", { code: 1011, reason: "cut by test" })).json()).closed).toBe(tabs);
      expect(textOf(sender.chat.messages.value[1]).length).toBeLessThan(expectedText(chunks).length);
      for (const chat of [sender.chat, ...(watcher ? [watcher.chat] : [])]) {
        await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(expectedText(chunks)), { timeout: 20_000 });
        await whenSettled(chat, 10_000);
        expect(chat.error.value).toBeUndefined();
        expectOneCompleteReply(chat.messages.value, chunks);
      }
      sender.unmount();
      watcher?.unmount();
    });
  }
});

describe("stop and local aborts", () => {
  it("stop() mid-stream: the server aborts, the partial text stays, and the next message streams", async () => {
    const name = uniqueName("stop");
    const { chat, unmount } = openChat(name, { body: { script: { chunks: 100, chunkDelayMs: 25 } } });
    await chat.ready;
    void chat.sendMessage({ text: "long" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(10));
    await chat.stop();
    expect(chat.status.value).toBe("ready");
    await waitForLog(name, (entry) => entry.kind === "abort");
    // Once the stopped turn has ended, the screen holds what the server stored (issue 21, 2).
    await waitForLog(name, (entry) => entry.kind === "turn-finished");
    await vi.waitFor(async () => expect(textOf(chat.messages.value[1])).toBe(textOf((await stored(name))[1])));
    const partial = textOf(chat.messages.value[1]);
    expect(partial.length).toBeGreaterThan(0);
    expect(expectedText(100).startsWith(partial)).toBe(true);
    expect((await readLog(name)).filter((entry) => entry.type === "cf_agent_chat_request_cancel")).toHaveLength(1);

    chat.sendMessage({ text: "short" });
    await vi.waitFor(() => expect(chat.messages.value).toHaveLength(4));
    await whenSettled(chat);
    expect(textOf(chat.messages.value[1])).toBe(partial);
    expect(textOf(chat.messages.value[3])).toBe(expectedText(100));
    unmount();
  });

  it("unmount mid-stream with defaults leaves the server turn running; a later mount shows it whole", async () => {
    const name = uniqueName("localabort");
    const first = openChat(name, { body: { script: { chunks: 30, chunkDelayMs: 30 } } });
    await first.chat.ready;
    void first.chat.sendMessage({ text: "keep going" });
    await vi.waitFor(() => expect(textOf(first.chat.messages.value[1]).length).toBeGreaterThan(6));
    first.unmount();
    await waitForLog(name, (entry) => entry.kind === "turn-finished");
    const log = await readLog(name);
    expect(log.filter((entry) => entry.kind === "abort")).toHaveLength(0);
    expect(log.filter((entry) => entry.type === "cf_agent_chat_request_cancel")).toHaveLength(0);
    const second = openChat(name);
    await second.chat;
    expectOneCompleteReply(second.chat.messages.value, 30);
    second.unmount();
  });

  it("unmount mid-stream with cancelOnClientAbort: true aborts the server turn", async () => {
    const name = uniqueName("cancelabort");
    const first = openChat(name, { cancelOnClientAbort: true, body: { script: { chunks: 100, chunkDelayMs: 30 } } });
    await first.chat.ready;
    void first.chat.sendMessage({ text: "stop when I leave" });
    await vi.waitFor(() => expect(textOf(first.chat.messages.value[1]).length).toBeGreaterThan(6));
    first.unmount();
    await waitForLog(name, (entry) => entry.kind === "abort");
    expect((await readLog(name)).filter((entry) => entry.type === "cf_agent_chat_request_cancel")).toHaveLength(1);
  });
});

describe("offline and failing connections", () => {
  it("a message sent while the server is unreachable is answered once the connection is back", async () => {
    const name = uniqueName("offline");
    const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
    const { chat, unmount } = openChat(name, { client: undefined, agent: client });
    await chat.ready;
    client.close();
    await vi.waitFor(() => expect(chat.connectionStatus.value).not.toBe("open"));
    const sent = chat.sendMessage({ text: "while offline" });
    await vi.waitFor(() => expect(chat.queuedMessages.value).toHaveLength(1));
    expect(chat.messages.value.map((m) => textOf(m))).toEqual(["while offline"]);
    client.reconnect();
    await sent;
    await whenSettled(chat);
    expect(chat.messages.value.map((m) => textOf(m))).toEqual(["while offline", expectedText(5)]);
    const requests = (await readLog(name)).filter((entry) => entry.type === "cf_agent_use_chat_request");
    expect(requests).toHaveLength(1);
    expect((await stored(name)).map((m) => textOf(m))).toEqual(["while offline", expectedText(5)]);
    unmount();
    client.close();
  });

  it("a policy close (1008): connectionError is set, nothing rejects unhandled, status is not stuck, a send stays queued", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (event: PromiseRejectionEvent) => unhandled.push(event.reason);
    window.addEventListener("unhandledrejection", onUnhandled);
    const name = uniqueName("policy");
    const mounted = mountComposable(() =>
      useAgentChat({ client: { agent: "PolicyRejectAgent", host: agentHost(), name }, initialMessages: [] })
    );
    const chat = mounted.result;
    await vi.waitFor(() => expect(chat.connectionError.value).not.toBeNull(), { timeout: 20_000 });
    expect(chat.connectionError.value!.message).toMatch(/not allowed|1008|connect/);
    void chat.sendMessage({ text: "will it be lost?" });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => textOf(m))).toEqual(["will it be lost?"]));
    expect(chat.queuedMessages.value).toHaveLength(1);
    expect(chat.status.value).not.toBe("submitted");
    expect(chat.status.value).not.toBe("streaming");
    mounted.unmount();
    window.removeEventListener("unhandledrejection", onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it("an upgrade the router refuses (unknown agent class): connectionError after the first attempt, retries go on", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const name = uniqueName("unknown");
    const mounted = mountComposable(() =>
      useAgentChat({ client: { agent: "NoSuchAgent", host: agentHost(), name }, initialMessages: [] })
    );
    const chat = mounted.result;
    await vi.waitFor(() => expect(chat.connectionError.value).not.toBeNull(), { timeout: 20_000 });
    expect(chat.connectionStatus.value).toBe("connecting");
    expect(chat.connectionError.value!.message).not.toContain("?");
    void chat.sendMessage({ text: "queued, not lost" });
    await vi.waitFor(() => expect(chat.queuedMessages.value).toHaveLength(1));
    expect(chat.status.value).toBe("ready");
    mounted.unmount();
    warn.mockRestore();
  });
});

describe("shared socket", () => {
  it("whenOpen works with an AgentClient passed as agent", async () => {
    const name = uniqueName("shared");
    const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
    const { chat, unmount } = openChat(name, { client: undefined, agent: client });
    await whenOpen(chat);
    unmount();
    expect(client.readyState).toBe(WebSocket.OPEN);
    client.close();
  });
});
