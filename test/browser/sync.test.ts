import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { type ChatTurnEndEvent, useAgentChat } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const user = (id: string, body = id): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: body }] });
const assistant = (id: string, body: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: body }] });

function setup(options: Partial<Parameters<typeof useAgentChat>[0]> = {}) {
  const socket = new FakeSocket();
  const mounted = mountComposable(() =>
    useAgentChat({ agent: socket, initialMessages: [], resume: false, throttle: false, ...options })
  );
  socket.open();
  return { socket, chat: mounted.result, unmount: mounted.unmount };
}

async function startLocalTurn(socket: FakeSocket, chat: ReturnType<typeof setup>["chat"], question: string) {
  const sent = chat.sendMessage({ text: question });
  await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request").length).toBeGreaterThan(0));
  const requests = socket.sentOf("cf_agent_use_chat_request");
  return { id: String(requests[requests.length - 1]!.id), sent };
}

describe("transcript frames while a reply streams", () => {
  it("a stale snapshot in the sending tab never erases live text or moves the streaming assistant (#1778)", async () => {
    const { socket, chat, unmount } = setup();
    const { id, sent } = await startLocalTurn(socket, chat, "q1");
    const userId = chat.messages.value[0]!.id;
    const [start, textStart, ...rest] = textReply("a1", ["Hello ", "there ", "friend"]);
    socket.chunk(id, start!);
    socket.chunk(id, textStart!);
    socket.chunk(id, rest[0]!);
    socket.chunk(id, rest[1]!);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("Hello there "));
    // The server's snapshot is behind the stream: an empty copy of the assistant.
    socket.push({ type: "cf_agent_chat_messages", messages: [user(userId, "q1"), { id: "a1", role: "assistant", parts: [] }] });
    expect(chat.messages.value.map((m) => m.id)).toEqual([userId, "a1"]);
    expect(text(chat.messages.value[1])).toBe("Hello there ");
    for (const chunk of rest.slice(2)) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(text(chat.messages.value[1])).toBe("Hello there friend");
    unmount();
  });

  it("the server inserting a message before the streaming assistant keeps the assistant last until its turn ends", async () => {
    const { socket, chat, unmount } = setup();
    const { id, sent } = await startLocalTurn(socket, chat, "q1");
    const userId = chat.messages.value[0]!.id;
    const chunks = textReply("a1", ["partial", " reply"]);
    for (const chunk of chunks.slice(0, 3)) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("partial"));
    socket.push({
      type: "cf_agent_chat_messages",
      messages: [user(userId, "q1"), { id: "a1", role: "assistant", parts: [] }, user("inserted", "from elsewhere")]
    });
    expect(chat.messages.value.map((m) => m.id)).toEqual([userId, "inserted", "a1"]);
    for (const chunk of chunks.slice(3)) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(text(chat.messages.value.find((m) => m.id === "a1"))).toBe("partial reply");
    unmount();
  });

  it("a stale snapshot in an observing tab keeps the observed text", async () => {
    const { socket, chat, unmount } = setup();
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")] });
    const chunks = textReply("obs-1", ["seen ", "so ", "far"]);
    for (const chunk of chunks.slice(0, 4)) socket.chunk("other-tab", chunk);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("seen so "));
    expect(chat.isServerStreaming.value).toBe(true);
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1"), assistant("obs-1", "seen")] });
    expect(text(chat.messages.value[1])).toBe("seen so ");
    for (const chunk of chunks.slice(4)) socket.chunk("other-tab", chunk);
    socket.done("other-tab");
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["obs-1", "seen so far"]
    ]);
    unmount();
  });

  it("an observed copy that no longer extends the stored text yields to the stored copy (#2166)", async () => {
    const { socket, chat, unmount } = setup();
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1"), assistant("m1", "server truth")] });
    socket.chunk("x", { type: "start", messageId: "m1" });
    socket.chunk("x", { type: "text-start", id: "t" });
    socket.chunk("x", { type: "text-delta", id: "t", delta: "different" });
    expect(text(chat.messages.value[1])).toBe("server truth");
    unmount();
  });
});

describe("message updates and clears", () => {
  it("cf_agent_message_updated replaces by id, or by a shared tool call id keeping the local id, and never appends (#1094)", async () => {
    const { socket, chat, unmount } = setup({
      initialMessages: [
        user("u1"),
        { id: "local-a", role: "assistant", parts: [{ type: "tool-lookup", toolCallId: "c1", state: "input-available", input: {} }] }
      ] as UIMessage[]
    });
    socket.push({ type: "cf_agent_message_updated", message: user("u1", "edited on server") });
    expect(text(chat.messages.value[0])).toBe("edited on server");
    socket.push({
      type: "cf_agent_message_updated",
      message: {
        id: "server-a",
        role: "assistant",
        parts: [{ type: "tool-lookup", toolCallId: "c1", state: "output-available", input: {}, output: 42 }]
      }
    });
    expect(chat.messages.value[1]!.id).toBe("local-a");
    expect(chat.messages.value[1]!.parts[0]).toMatchObject({ state: "output-available", output: 42 });
    socket.push({ type: "cf_agent_message_updated", message: assistant("nobody-has-this", "x") });
    expect(chat.messages.value).toHaveLength(2);
    unmount();
  });

  it("a server clear empties the chat and every streaming flag, and sends nothing back", async () => {
    const { socket, chat, unmount } = setup();
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")] });
    socket.chunk("other", { type: "start", messageId: "o1" });
    socket.chunk("other", { type: "text-delta", id: "t", delta: "observed" });
    socket.push({ type: "cf_agent_chat_recovering", recovering: true });
    expect(chat.isServerStreaming.value).toBe(true);
    expect(chat.isRecovering.value).toBe(true);
    const before = socket.sent.length;
    socket.push({ type: "cf_agent_chat_clear" });
    expect(chat.messages.value).toEqual([]);
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.isRecovering.value).toBe(false);
    expect(chat.isStreaming.value).toBe(false);
    expect(socket.sent.length).toBe(before);
    unmount();
  });

  it("a buffered send survives a connect transcript that lacks it, and only that one (#1983)", async () => {
    const { socket, chat, unmount } = setup();
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")] });
    // The socket drops after the client decided to send: the frame is buffered.
    const sent = chat.sendMessage({ text: "typed just before the drop" });
    await Promise.resolve();
    socket.drop();
    await vi.waitFor(() => expect(chat.messages.value).toHaveLength(2));
    socket.open();
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")], connect: true });
    expect(chat.messages.value.map((m) => text(m))).toEqual(["u1", "typed just before the drop"]);
    void sent;
    unmount();
  });
});

describe("sends while another client's turn streams", () => {
  it("wait until that turn ends, so the request never carries a partial copy of its reply", async () => {
    const { socket, chat, unmount } = setup();
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")] });
    const chunks = textReply("other-reply", ["still ", "going"]);
    for (const chunk of chunks.slice(0, 3)) socket.chunk("other", chunk);
    const sent = chat.sendMessage({ text: "mine" });
    await vi.waitFor(() => expect(chat.queuedMessages.value).toHaveLength(1));
    expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(0);
    expect(chat.messages.value.map((m) => text(m))).toEqual(["u1", "still ", "mine"]);
    for (const chunk of chunks.slice(3)) socket.chunk("other", chunk);
    socket.done("other");
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const request = socket.sentOf("cf_agent_use_chat_request")[0] as { id: string; init: { body: string } };
    const body = JSON.parse(request.init.body) as { messages: UIMessage[] };
    expect(body.messages.map((m) => text(m))).toEqual(["u1", "still going", "mine"]);
    for (const chunk of textReply("a2", ["ok"])) socket.chunk(request.id, chunk);
    socket.done(request.id);
    await sent;
    expect(chat.queuedMessages.value).toHaveLength(0);
    unmount();
  });
});

describe("onTurnEnd", () => {
  it("reports each ended request once, after status settled for this tab's own turn", async () => {
    const events: Array<{ event: ChatTurnEndEvent; status: string }> = [];
    let statusAtCall = "";
    const { socket, chat, unmount } = setup({
      onTurnEnd: (event) => {
        statusAtCall = chat.status.value;
        events.push({ event, status: statusAtCall });
      }
    });
    const { id, sent } = await startLocalTurn(socket, chat, "q");
    for (const chunk of textReply("a1", ["ok"])) socket.chunk(id, chunk);
    socket.done(id, { messageIds: ["u-x"] });
    await sent;
    await vi.waitFor(() => expect(events).toHaveLength(1));
    expect(events[0]).toEqual({
      event: { requestId: id, messageIds: ["u-x"], outcome: "completed", replay: false },
      status: "ready"
    });
    // A replay of the same terminal does not report it again.
    socket.done(id, { replay: true });
    // Another connection's request ends: reported at once, with its error.
    socket.push({ type: "cf_agent_use_chat_response", id: "other", body: "boom", done: false, error: true });
    socket.done("other");
    await vi.waitFor(() => expect(events).toHaveLength(2));
    expect(events[1]!.event).toEqual({ requestId: "other", outcome: "error", error: "boom", replay: false });
    socket.done("recovering-one", { outcome: "recovering" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toHaveLength(2);
    unmount();
  });
});

describe("setMessages", () => {
  it("resolves an updater against the current messages and sends the result", () => {
    const { socket, chat, unmount } = setup({ initialMessages: [user("u1"), user("u2")] });
    chat.setMessages((current) => current.filter((message) => message.id !== "u1"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u2"]);
    const frame = socket.sentOf("cf_agent_chat_messages").at(-1) as { messages: UIMessage[] };
    expect(frame.messages.map((m) => m.id)).toEqual(["u2"]);
    unmount();
  });

  it("with syncMessagesToServer: false changes only this client", () => {
    const { socket, chat, unmount } = setup({ initialMessages: [user("u1")], syncMessagesToServer: false });
    chat.setMessages([]);
    expect(chat.messages.value).toEqual([]);
    expect(socket.sentOf("cf_agent_chat_messages")).toHaveLength(0);
    unmount();
  });
});

describe("lifecycle", () => {
  it("unmounting removes every listener it added to a shared connection and leaves it open", async () => {
    const { socket, unmount } = setup();
    expect(socket.listenerCount).toBeGreaterThan(0);
    unmount();
    expect(socket.listenerCount).toBe(0);
    expect(socket.readyState).toBe(1);
  });

  it("warns when called outside a component or effect scope", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const socket = new FakeSocket();
    useAgentChat({ agent: socket, initialMessages: [] });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("outside a component setup or effectScope"));
    warn.mockRestore();
  });
});

describe("first load", () => {
  it("publishes the loaded history before isLoading turns false, even with a throttle", async () => {
    const { watch } = await import("vue");
    const socket = new FakeSocket();
    let release!: (messages: UIMessage[]) => void;
    const mounted = mountComposable(() =>
      useAgentChat({
        agent: socket,
        resume: false,
        throttle: 50,
        getInitialMessages: () => new Promise<UIMessage[]>((resolve) => (release = resolve))
      })
    );
    const chat = mounted.result;
    const seenWhenLoaded: number[] = [];
    watch(chat.isLoading, (loading) => {
      if (!loading) seenWhenLoaded.push(chat.messages.value.length);
    }, { flush: "sync" });
    socket.open();
    expect(chat.isLoading.value).toBe(true);
    // An observed stream publishes first and opens a throttle window.
    socket.chunk("other", { type: "start", messageId: "o1" });
    socket.chunk("other", { type: "text-delta", id: "t", delta: "live" });
    release([user("h1"), assistant("h2", "history")]);
    await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
    expect(seenWhenLoaded).toEqual([3]);
    mounted.unmount();
  });
});
