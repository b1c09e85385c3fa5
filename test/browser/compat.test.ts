/**
 * Older servers, replayed frame by frame. `npm run test:compat` runs the e2e
 * tier against the oldest `@cloudflare/ai-chat` that builds on the supported
 * `agents` (it sends no `seq`); these tests cover what no installable server
 * can show: servers without `cf_agent_stream_pending` (agents < 0.17), without
 * `probeId` (agents < 0.18) and without `seq` on chunks (before
 * `@cloudflare/ai-chat` 0.12.2), and the frame orderings they produce.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const textParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((part) => part.type === "text");
const texts = (messages: readonly UIMessage[]) => messages.map((message) => text(message));

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.useRealTimers();
});

function setup(options: Partial<Parameters<typeof useAgentChat>[0]> = {}) {
  const socket = new FakeSocket();
  const mounted = mountComposable(() =>
    useAgentChat({ agent: socket, initialMessages: [], throttle: false, ...options })
  );
  cleanup.push(mounted.unmount);
  return { socket, chat: mounted.result };
}

const probes = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_request");
const acks = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_ack");
const requests = (socket: FakeSocket) => socket.sentOf("cf_agent_use_chat_request");
const user = (id: string, content = id): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: content }] });
const reply = (id: string, content: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: content }] });

/** An old server's replay: no `seq` on any frame. */
function replayWithoutSeq(socket: FakeSocket, id: string, chunks: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  for (const chunk of chunks) socket.chunk(id, chunk, { replay: true, ...extra });
  socket.push({ type: "cf_agent_use_chat_response", id, body: "", done: false, replay: true, replayComplete: true, ...extra });
}

/** Opens the socket and answers the mount probe the way a server without `probeId` does. */
async function openIdleWithoutProbeId(socket: FakeSocket, probeCount = 1) {
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(probeCount));
  socket.push({ type: "cf_agent_stream_resume_none" });
}

describe("a server without probeId or seq", () => {
  it("an offer without probeId attaches the probe; a replay without seq renders once, twice over", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u")] });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1" });
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id: "r1" }]);
    const chunks = textReply("a1", ["one ", "two ", "three"]);
    replayWithoutSeq(socket, "r1", chunks.slice(0, 4));
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one two "));

    // The socket drops; the old server replays the whole buffer again, still without seq.
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1" });
    replayWithoutSeq(socket, "r1", chunks.slice(0, 4));
    for (const chunk of chunks.slice(4)) socket.chunk("r1", chunk);
    socket.done("r1");
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u", "a1"]);
    expect(textParts(chat.messages.value[1])).toHaveLength(1);
    expect(text(chat.messages.value[1])).toBe("one two three");
    expect(chat.isServerStreaming.value).toBe(false);
  });

  it("a resume_none without reason or probeId settles the mount probe, and a send streams", async () => {
    const { socket, chat } = setup();
    await openIdleWithoutProbeId(socket);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    const sent = chat.sendMessage({ text: "hi" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = String(requests(socket)[0]!.id);
    for (const chunk of textReply("a1", ["hello"])) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(chat.status.value).toBe("ready");
    expect(texts(chat.messages.value)).toEqual(["hi", "hello"]);
  });
});

describe("a continuation replayed without seq", () => {
  const tool = { type: "tool-askUser", toolCallId: "c1", state: "input-available", input: { q: "c1" } } as unknown as UIMessage["parts"][number];
  const waiting = (): UIMessage[] => [user("u1", "ask me"), { id: "a1", role: "assistant", parts: [{ type: "step-start" }, tool] }];

  it("after a reconnect mid-continuation, the text it already showed is not shown twice", async () => {
    const { socket, chat } = setup({ initialMessages: waiting() });
    await openIdleWithoutProbeId(socket);
    void chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    const live = [{ type: "start" }, { type: "start-step" }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "one " }];
    for (const chunk of live) socket.chunk("k1", chunk, { continuation: true });
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one "));

    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(3));
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    replayWithoutSeq(socket, "k1", live, { continuation: true });
    for (const chunk of [{ type: "text-delta", id: "t", delta: "two" }, { type: "text-end", id: "t" }, { type: "finish-step" }, { type: "finish" }]) {
      socket.chunk("k1", chunk, { continuation: true });
    }
    socket.done("k1", { continuation: true });
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "a1"]);
    expect(text(chat.messages.value[1])).toBe("one two");
  });
});

describe("a server without cf_agent_stream_pending", () => {
  it("a probe the server never answers gives up after 5 s; the chat is ready and sends", async () => {
    vi.useFakeTimers();
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    let settled = false;
    void chat.resumeStream().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(5_100);
    expect(settled).toBe(true);
    expect(chat.status.value).toBe("ready");
    vi.useRealTimers();
    void chat.sendMessage({ text: "still works" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
  });

  it("a reply still in its pre-stream window when the socket drops: resume_none, then the stream arrives live", async () => {
    const { socket, chat } = setup();
    await openIdleWithoutProbeId(socket);
    const sent = chat.sendMessage({ text: "slow start" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = String(requests(socket)[0]!.id);
    socket.drop();
    await sent;
    socket.open();
    // The reply has not started: an old server cannot say "pending", only "none".
    await vi.waitFor(() => expect(probes(socket).length).toBeGreaterThanOrEqual(2));
    socket.push({ type: "cf_agent_stream_resume_none" });
    // Then the turn starts and its chunks reach every connection.
    for (const chunk of textReply("a1", ["late ", "reply"])) socket.chunk(id, chunk);
    socket.done(id);
    await vi.waitFor(() => expect(texts(chat.messages.value)).toEqual(["slow start", "late reply"]));
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    expect(chat.status.value).not.toBe("submitted");
    expect(chat.status.value).not.toBe("streaming");
  });
});

describe("frame orderings of @cloudflare/ai-chat 0.12.0", () => {
  it("a transcript frame of the previous turn that arrives after a held send went out keeps the sent message", async () => {
    const { socket, chat } = setup({ initialMessages: [user("a1-q", "A1"), reply("a1-r", "echo: A1")] });
    await openIdleWithoutProbeId(socket);
    // Another tab's turn streams here as an observed turn.
    socket.push({ type: "cf_agent_chat_messages", messages: [user("a1-q", "A1"), reply("a1-r", "echo: A1"), user("a2-q", "A2")] });
    socket.chunk("other", { type: "start", messageId: "a2-r" });
    socket.chunk("other", { type: "text-start", id: "t" });
    socket.chunk("other", { type: "text-delta", id: "t", delta: "echo: A2" });
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(true));
    // This tab sends meanwhile: held until the other turn ends.
    const sent = chat.sendMessage({ text: "B1" });
    await vi.waitFor(() => expect(chat.queuedMessages.value).toHaveLength(1));
    expect(requests(socket)).toHaveLength(0);
    socket.chunk("other", { type: "text-end", id: "t" });
    socket.chunk("other", { type: "finish" });
    socket.done("other");
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = String(requests(socket)[0]!.id);
    // The old server broadcasts the other turn's transcript only now, without B1,
    // and never sends this tab a transcript of its own turn.
    socket.push({
      type: "cf_agent_chat_messages",
      messages: [user("a1-q", "A1"), reply("a1-r", "echo: A1"), user("a2-q", "A2"), reply("a2-r", "echo: A2")]
    });
    expect(texts(chat.messages.value)).toEqual(["A1", "echo: A1", "A2", "echo: A2", "B1"]);
    for (const chunk of textReply("b1-r", ["echo: B1"])) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(texts(chat.messages.value)).toEqual(["A1", "echo: A1", "A2", "echo: A2", "B1", "echo: B1"]);
  });

  it("a transcript frame that lags behind a direct send keeps the sent message", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1", "first")] });
    await openIdleWithoutProbeId(socket);
    const sent = chat.sendMessage({ text: "second" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = String(requests(socket)[0]!.id);
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1", "first"), reply("r1", "answer")] });
    expect(texts(chat.messages.value)).toEqual(["first", "answer", "second"]);
    for (const chunk of textReply("r2", ["answer 2"])) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(texts(chat.messages.value)).toEqual(["first", "answer", "second", "answer 2"]);
    // Once the turn is over, a snapshot is the truth again.
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1", "first")] });
    expect(texts(chat.messages.value)).toEqual(["first"]);
  });
});
