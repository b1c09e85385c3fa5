/**
 * Parity with upstream's `useAgentChat` / `useAgent` (agents@0.32): one test
 * per item of the acceptance checklist in `../shared/upstream-parity.md` §7
 * that no other test covers. PARITY.md maps every item to the test that
 * proves it. A scripted socket plays the server, so each ordering is exact.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ChatTurnEndEvent, type OnToolCallCallback, type UseAgentChatOptions, useAgentChat } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

type Part = UIMessage["parts"][number];
type ToolCallArgs = Parameters<OnToolCallCallback>[0];
type Request = { id: string; init: { method: string; body: string } };

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function setup(options: Partial<UseAgentChatOptions> = {}, socket = new FakeSocket()) {
  const mounted = mountComposable(() => useAgentChat({ agent: socket, initialMessages: [], throttle: false, ...options }));
  cleanup.push(mounted.unmount);
  return { socket, chat: mounted.result, unmount: mounted.unmount };
}

const probes = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_request");
const acks = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_ack");
const requests = (socket: FakeSocket) => socket.sentOf("cf_agent_use_chat_request") as unknown as Request[];
const cancels = (socket: FakeSocket) => socket.sentOf("cf_agent_chat_request_cancel");
const bodyOf = (request: Request | undefined) => JSON.parse(request!.init.body) as Record<string, unknown>;

/** Opens the socket and answers the mount probe: nothing is streaming. */
async function openIdle(socket: FakeSocket) {
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
  socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
}

/** Sends `text` and returns the request id once the request frame went out. */
async function send(socket: FakeSocket, chat: ReturnType<typeof setup>["chat"], text: string) {
  const before = requests(socket).length;
  const sent = chat.sendMessage({ text }).catch(() => {});
  await vi.waitFor(() => expect(requests(socket)).toHaveLength(before + 1));
  return { id: requests(socket)[before]!.id, sent };
}

/** Opens the socket, sends "ask", streams a tool call ("c1") that waits for an answer, drops the socket mid-turn; returns the request id. */
async function askThenDrop(socket: FakeSocket, chat: ReturnType<typeof setup>["chat"]): Promise<string> {
  socket.open();
  const { id, sent } = await send(socket, chat, "ask");
  socket.chunk(id, { type: "start", messageId: "a1" });
  socket.chunk(id, { type: "tool-input-available", toolCallId: "c1", toolName: "askUser", input: {} });
  socket.chunk(id, { type: "finish" });
  await vi.waitFor(() => expect(chat.messages.value[1]?.parts).toHaveLength(1));
  socket.drop();
  await sent;
  expect(chat.status.value).toBe("error");
  return id;
}

/**
 * Lets pending work run (the reconcile microtask, AI SDK stream reads, 0 ms
 * timers) before asserting that something did NOT happen.
 */
async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const texts = (messages: readonly UIMessage[]) => messages.map((message) => text(message));
const user = (id: string, body = id): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: body }] });
const reply = (id: string, body: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: body }] });
const tool = (name: string, toolCallId: string, state: string, extra: Record<string, unknown> = {}) =>
  ({ type: `tool-${name}`, toolCallId, state, input: { q: toolCallId }, ...extra }) as unknown as Part;
/** A transcript whose last reply waits for the client to answer `askUser` (call `c1`). */
const waitingForAnswer = (): UIMessage[] => [
  user("u1", "ask me"),
  { id: "a1", role: "assistant", parts: [{ type: "step-start" }, tool("askUser", "c1", "input-available")] }
];

/** An `onToolCall` that records each call. */
function recordCalls() {
  const calls: ToolCallArgs[] = [];
  const onToolCall: OnToolCallCallback = (args) => {
    calls.push(args);
  };
  return { calls, onToolCall };
}

/** The frame that ends a replay whose stream is still live. */
const replayComplete = (id: string, extra: Record<string, unknown> = {}) => ({
  type: "cf_agent_use_chat_response",
  id,
  body: "",
  done: false,
  replay: true,
  replayComplete: true,
  ...extra
});

describe("sending and transport (items 1-17)", () => {
  it("#01: sendMessage sends one request: an 8-character id, POST, and a JSON string body of messages, trigger and the extra body", async () => {
    const { socket, chat } = setup({ resume: false, body: { tenant: "acme" } });
    socket.open();
    const { id, sent } = await send(socket, chat, "hi");
    const request = requests(socket)[0]!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(request.init.method).toBe("POST");
    expect(typeof request.init.body).toBe("string");
    const body = bodyOf(request);
    expect(Object.keys(body)).toEqual(["messages", "trigger", "tenant"]);
    expect(body.trigger).toBe("submit-message");
    expect(body.tenant).toBe("acme");
    expect(texts(body.messages as UIMessage[])).toEqual(["hi"]);
    for (const chunk of textReply("a1", ["ok"])) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(requests(socket)).toHaveLength(1);
  });

  it("#04: clientTools in the request body lists exactly the tools with execute, as { name, description, parameters }", async () => {
    const parameters = { type: "object", properties: { city: { type: "string" } } } as const;
    const { socket, chat } = setup({
      resume: false,
      tools: {
        weather: { description: "Weather in a city", parameters, execute: () => "sunny" },
        askUser: { description: "Asks the user" }
      }
    });
    socket.open();
    await send(socket, chat, "hi");
    expect(bodyOf(requests(socket)[0]).clientTools).toEqual([{ name: "weather", description: "Weather in a city", parameters }]);
  });

  it("#05: prepareSendMessagesRequest's body overrides the body option, and it gets id === the socket's _pk", async () => {
    const seen: Array<{ id: string; trigger: string; count: number }> = [];
    const { socket, chat } = setup({
      resume: false,
      body: { from: "body", kept: 1 },
      prepareSendMessagesRequest: ({ id, trigger, messages }) => {
        seen.push({ id, trigger, count: messages.length });
        return { body: { from: "prepare" } };
      }
    });
    socket.open();
    await send(socket, chat, "hi");
    expect(seen).toEqual([{ id: "fake-pk", trigger: "submit-message", count: 1 }]);
    expect(bodyOf(requests(socket)[0])).toMatchObject({ from: "prepare", kept: 1 });
  });

  it("#06: a per-call body (sendMessage(msg, { body })) overrides the body option and prepareSendMessagesRequest", async () => {
    const { socket, chat } = setup({
      resume: false,
      body: { from: "body", a: 1 },
      prepareSendMessagesRequest: () => ({ body: { from: "prepare", b: 2 } })
    });
    socket.open();
    void chat.sendMessage({ text: "hi" }, { body: { from: "call", c: 3 } });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    expect(bodyOf(requests(socket)[0])).toMatchObject({ from: "call", a: 1, b: 2, c: 3 });
  });

  it("#09: an error frame for a local request sets status error with the body text, or 'Stream error' when it is empty", async () => {
    const { socket, chat } = setup({ resume: false });
    socket.open();
    const first = await send(socket, chat, "one");
    socket.chunk(first.id, { type: "start", messageId: "a1" });
    socket.push({ type: "cf_agent_use_chat_response", id: first.id, body: "model exploded", done: false, error: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    expect(chat.error.value?.message).toBe("model exploded");
    await first.sent;

    const second = await send(socket, chat, "two");
    await vi.waitFor(() => expect(chat.status.value).toBe("submitted"));
    socket.push({ type: "cf_agent_use_chat_response", id: second.id, body: "", done: false, error: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    expect(chat.error.value?.message).toBe("Stream error");
  });

  it("#10: the socket closing mid-stream sets status error 'WebSocket closed mid-stream' and sends no cancel", async () => {
    const { socket, chat } = setup({ resume: false, cancelOnClientAbort: true });
    socket.open();
    const { id, sent } = await send(socket, chat, "q");
    for (const chunk of textReply("a1", ["partial ", "rest"]).slice(0, 3)) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("partial "));
    socket.drop();
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    expect(chat.error.value?.message).toBe("WebSocket closed mid-stream");
    await sent;
    // Nothing was sent, nor waits in the socket's buffer for the next open.
    socket.open();
    expect(cancels(socket)).toEqual([]);
    expect(text(chat.messages.value[1])).toBe("partial ");
  });

  it("#17: chunks of a stopped request are not rendered; its done releases the id", async () => {
    const ends: ChatTurnEndEvent[] = [];
    const { socket, chat } = setup({ onTurnEnd: (event) => ends.push(event) });
    await openIdle(socket);
    const { id } = await send(socket, chat, "q");
    for (const chunk of textReply("a1", ["kept"]).slice(0, 3)) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("kept"));
    await chat.stop();
    expect(cancels(socket)).toEqual([{ type: "cf_agent_chat_request_cancel", id }]);
    expect(chat.status.value).toBe("ready");

    // The server had more in flight: still this client's request, so not rendered, not observed.
    socket.chunk(id, { type: "text-delta", id: "t", delta: " late" });
    socket.chunk(id, { type: "text-end", id: "t" });
    // An offer of it is a duplicate of a request this client holds: not ACKed.
    socket.push({ type: "cf_agent_stream_resuming", id });
    await settle();
    expect(text(chat.messages.value[1])).toBe("kept");
    expect(chat.isServerStreaming.value).toBe(false);
    expect(acks(socket)).toEqual([]);

    socket.done(id, { outcome: "aborted" });
    await vi.waitFor(() => expect(ends).toEqual([{ requestId: id, outcome: "aborted", replay: false }]));
    // Released: the id is no longer this client's, so an offer of it is now observed and ACKed.
    socket.push({ type: "cf_agent_stream_resuming", id });
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id }]);
    expect(text(chat.messages.value[1])).toBe("kept");
  });
});

describe("resume handshake (items 18-31)", () => {
  it("#23: stream_pending stretches the probe's wait to 60 s from that frame, and each further pending restarts it", async () => {
    vi.useFakeTimers();
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    const probeId = probes(socket)[0]!.probeId;
    let settled = false;
    void chat.resumeStream().then(() => (settled = true));
    socket.push({ type: "cf_agent_stream_pending", probeId });
    await vi.advanceTimersByTimeAsync(59_000);
    expect(settled).toBe(false);
    socket.push({ type: "cf_agent_stream_pending", probeId });
    // 118 s after the first pending, 59 s after the second: still waiting.
    await vi.advanceTimersByTimeAsync(59_000);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(settled).toBe(true);
    expect(chat.status.value).toBe("ready");
    expect(probes(socket)).toHaveLength(1);
  });

  it("#25: an unsolicited offer (resume: true) is ACKed once per socket and rendered through the observer, isServerStreaming true", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    await openIdle(socket);
    socket.push({ type: "cf_agent_stream_resuming", id: "srv" });
    socket.push({ type: "cf_agent_stream_resuming", id: "srv" });
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id: "srv" }]);
    expect(chat.isServerStreaming.value).toBe(true);
    expect(chat.status.value).toBe("ready");
    const chunks = textReply("s1", ["from ", "the server"]);
    chunks.slice(0, 3).forEach((chunk, seq) => socket.chunk("srv", chunk, { replay: true, seq }));
    socket.push(replayComplete("srv"));
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["s1", "from "]
    ]);
    chunks.slice(3).forEach((chunk, index) => socket.chunk("srv", chunk, { seq: 3 + index }));
    socket.done("srv");
    expect(chat.isServerStreaming.value).toBe(false);
    expect(text(chat.messages.value[1])).toBe("from the server");
    expect(chat.status.value).toBe("ready");
  });

  it("#26: an unsolicited offer with resume: false is not ACKed or rendered, and holds onToolCall until that request's terminal frame", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ resume: false, onToolCall, initialMessages: [user("u1")] });
    socket.open();
    socket.push({ type: "cf_agent_stream_resuming", id: "srv" });
    expect(acks(socket)).toEqual([]);
    expect(chat.isServerStreaming.value).toBe(false);
    // The transcript now ends with a call waiting for this client.
    socket.push({ type: "cf_agent_chat_messages", messages: waitingForAnswer() });
    await settle();
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(calls).toHaveLength(0);
    socket.done("srv");
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.toolCall.toolCallId).toBe("c1");
    expect(acks(socket)).toEqual([]);
  });

  it("#29: replayed text deltas reach the AI SDK merged into a few chunks, flushed by replayComplete", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    const seen = new Set<string>();
    const { watch } = await import("vue");
    cleanup.push(watch(chat.messages, (messages) => seen.add(text(messages[1])), { flush: "sync" }));
    const deltas = Array.from({ length: 60 }, (_, i) => `d${i} `);
    textReply("a1", deltas)
      .slice(0, -2)
      .forEach((chunk, seq) => socket.chunk("r1", chunk, { replay: true, seq }));
    socket.push(replayComplete("r1"));
    // Flushed by replayComplete: the whole replay shows while the stream is still live.
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe(deltas.join("")));
    expect(chat.status.value).toBe("streaming");
    // One chunk per delta would have shown 60 intermediate texts.
    expect(seen.size).toBeLessThan(5);
    socket.chunk("r1", { type: "text-end", id: "t" }, { seq: 62 });
    socket.done("r1");
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
  });

  it("#31: a replay that fails after content was buffered shows the content, then the error", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    textReply("a1", ["buffered ", "content"])
      .slice(0, 4)
      .forEach((chunk, seq) => socket.chunk("r1", chunk, { replay: true, seq }));
    socket.push({ type: "cf_agent_use_chat_response", id: "r1", body: "replay broke", done: false, error: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    expect(chat.error.value?.message).toBe("replay broke");
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["a1", "buffered content"]
    ]);
  });
});

describe("reconnect (items 32-40)", () => {
  it("#34: a socket that reopens while a request is submitted re-probes only once that request settled", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1"), reply("a1", "first answer")] });
    await openIdle(socket);
    socket.drop();
    // Sent while the socket is down: the request waits in the socket's buffer.
    const regenerated = chat.regenerate().catch(() => {});
    await vi.waitFor(() => expect(chat.status.value).toBe("submitted"));
    expect(requests(socket)).toHaveLength(0);
    socket.open();
    expect(requests(socket)).toHaveLength(1);
    expect(bodyOf(requests(socket)[0]).trigger).toBe("regenerate-message");
    await settle();
    expect(probes(socket)).toHaveLength(1);
    const id = requests(socket)[0]!.id;
    for (const chunk of textReply("a2", ["second answer"])) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(chat.status.value).toBe("streaming"));
    expect(probes(socket)).toHaveLength(1);
    socket.done(id);
    await regenerated;
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    expect(probes(socket)[1]!.probeId).not.toBe(probes(socket)[0]!.probeId);
  });

  it("#36: with resume: false, the idle probe after a reconnect (21 characters) releases a held tool call when answered idle", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ resume: false, onToolCall });
    await askThenDrop(socket, chat);
    socket.open();
    expect(probes(socket)).toHaveLength(1);
    const probeId = String(probes(socket)[0]!.probeId);
    expect(probeId).toHaveLength(21);
    await settle();
    expect(calls).toHaveLength(0);
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.toolCall).toEqual({ toolCallId: "c1", toolName: "askUser", input: {} });
    expect(probes(socket)).toHaveLength(1);
  });

  it("#36: with resume: false, the idle answer to that probe clears isServerStreaming", async () => {
    const { socket, chat } = setup({ resume: false, initialMessages: [user("u1")] });
    socket.open();
    const { id, sent } = await send(socket, chat, "q");
    socket.chunk(id, { type: "start", messageId: "a1" });
    socket.drop();
    await sent;
    socket.open();
    const probeId = String(probes(socket)[0]!.probeId);
    // Another connection's turn streams to this socket meanwhile.
    socket.chunk("other", { type: "start", messageId: "o1" });
    socket.chunk("other", { type: "text-delta", id: "t", delta: "elsewhere" });
    expect(chat.isServerStreaming.value).toBe(true);
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: "not-this-probe" });
    expect(chat.isServerStreaming.value).toBe(true);
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId });
    expect(chat.isServerStreaming.value).toBe(false);
  });

  for (const resume of [false, true]) {
    it(`#38: a close ${resume ? "keeps" : "clears"} an observer's isServerStreaming at once (resume: ${resume})`, async () => {
      const { socket, chat } = setup({ resume, initialMessages: [user("u1")] });
      if (resume) await openIdle(socket);
      else socket.open();
      socket.chunk("other", { type: "start", messageId: "o1" });
      socket.chunk("other", { type: "text-delta", id: "t", delta: "observed" });
      expect(chat.isServerStreaming.value).toBe(true);
      socket.drop();
      expect(chat.isServerStreaming.value).toBe(resume);
      expect(text(chat.messages.value[1])).toBe("observed");
    });
  }

  it("#39: a close drops the streaming assistant's protection: the next snapshot is taken as it is", async () => {
    const { socket, chat } = setup();
    await openIdle(socket);
    const { id, sent } = await send(socket, chat, "q1");
    const userId = chat.messages.value[0]!.id;
    for (const chunk of textReply("a1", ["partial", " reply"]).slice(0, 3)) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("partial"));
    socket.drop();
    await sent;
    socket.open();
    // The stored transcript has moved on: a message now follows the cut-off reply.
    socket.push({
      type: "cf_agent_chat_messages",
      messages: [user(userId, "q1"), reply("a1", "partial reply"), user("later", "from another tab")]
    });
    expect(chat.messages.value.map((m) => m.id)).toEqual([userId, "a1", "later"]);
    expect(text(chat.messages.value[1])).toBe("partial reply");
  });

  it("#39: an offer on the replacement socket is ACKed again", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    await openIdle(socket);
    socket.push({ type: "cf_agent_stream_resuming", id: "srv" });
    socket.chunk("srv", { type: "start", messageId: "s1" });
    expect(acks(socket)).toHaveLength(1);
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id: "srv", probeId: probes(socket)[1]!.probeId });
    expect(acks(socket)).toEqual([
      { type: "cf_agent_stream_resume_ack", id: "srv" },
      { type: "cf_agent_stream_resume_ack", id: "srv" }
    ]);
    for (const chunk of textReply("s1", ["resumed"])) socket.chunk("srv", chunk);
    socket.done("srv");
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("resumed"));
  });

  it("#40: a close during a local turn holds the tool calls it left until that turn's terminal frame", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ resume: false, onToolCall });
    const id = await askThenDrop(socket, chat);
    await settle();
    expect(calls).toHaveLength(0);
    socket.open();
    await settle();
    expect(calls).toHaveLength(0);
    // The server says the turn ended (its live done frame reaches every connection).
    socket.done(id);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
  });
});

/** Streams continuation chunks the way AIChatAgent does: every frame flagged, `seq` counting from `from`. */
function continuationChunks(socket: FakeSocket, id: string, chunks: Array<Record<string, unknown>>, from = 0, extra: Record<string, unknown> = {}) {
  chunks.forEach((chunk, index) => socket.chunk(id, chunk, { continuation: true, seq: from + index, ...extra }));
}

const CONTINUATION_HEAD = [
  { type: "start" },
  { type: "start-step" },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "one " }
];
const CONTINUATION_TAIL = [
  { type: "text-delta", id: "t", delta: "two" },
  { type: "text-end", id: "t" },
  { type: "finish-step" },
  { type: "finish" }
];

/** A continuation this client attached to, cut off by a socket drop after "one ", then re-attached. */
async function continuationCutAndReattached() {
  const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
  await openIdle(socket);
  chat.addToolOutput({ toolCallId: "c1", output: "yes" });
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
  socket.push({ type: "cf_agent_stream_resuming", id: "k1", probeId: probes(socket)[1]!.probeId });
  continuationChunks(socket, "k1", CONTINUATION_HEAD);
  await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one "));
  socket.drop();
  await vi.waitFor(() => expect(chat.status.value).toBe("error"));
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(3));
  socket.push({ type: "cf_agent_stream_resuming", id: "k1", probeId: probes(socket)[2]!.probeId });
  expect(acks(socket)).toHaveLength(2);
  // The server replays the continuation's buffer from chunk 0, then goes on live.
  continuationChunks(socket, "k1", CONTINUATION_HEAD, 0, { replay: true });
  socket.push(replayComplete("k1", { continuation: true }));
  return { socket, chat };
}

/** Observes another connection's continuation `id` live up to `seq` 1 (text "x"), then has it offered and replayed. */
function observeThenReplay(socket: FakeSocket, id: string, delta: string) {
  socket.push({ type: "cf_agent_stream_resuming", id });
  socket.chunk(id, { type: "text-delta", id: `t-${id}`, delta }, { continuation: true, replay: true, seq: 0 });
  socket.push(replayComplete(id, { continuation: true }));
}

describe("seq dedupe (items 41-44)", () => {
  it("#41: replayed continuation chunks already applied (seq ≤ applied) are not applied again on the transport path", async () => {
    const { socket, chat } = await continuationCutAndReattached();
    continuationChunks(socket, "k1", CONTINUATION_TAIL, 4);
    socket.done("k1", { continuation: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(text(chat.messages.value[1])).toBe("one two");
  });

  it("#41: replayed continuation chunks already applied are not applied again on the observer path", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1"), reply("a1", "base ")] });
    await openIdle(socket);
    // Another connection's continuation of a1, seen live.
    continuationChunks(socket, "k9", CONTINUATION_HEAD.slice(0, 1).concat(CONTINUATION_HEAD.slice(2)));
    expect(text(chat.messages.value[1])).toBe("base one ");
    // The server offers it to this socket: the ACK makes it replay its buffer from chunk 0.
    socket.push({ type: "cf_agent_stream_resuming", id: "k9" });
    expect(acks(socket)).toHaveLength(1);
    continuationChunks(socket, "k9", CONTINUATION_HEAD.slice(0, 1).concat(CONTINUATION_HEAD.slice(2)), 0, { replay: true });
    socket.push(replayComplete("k9", { continuation: true }));
    continuationChunks(socket, "k9", CONTINUATION_TAIL, 3);
    socket.done("k9", { continuation: true });
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(text(chat.messages.value[1])).toBe("base one two");
  });

  it("#42: live deltas after a skipped replay that left the text part open get its start re-sent first (no 'text part not found')", async () => {
    const { socket, chat } = await continuationCutAndReattached();
    // The skipped run opened text part "t" and never closed it; this delta needs it open.
    socket.chunk("k1", CONTINUATION_TAIL[0]!, { continuation: true, seq: 4 });
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one two"));
    continuationChunks(socket, "k1", CONTINUATION_TAIL.slice(1), 5);
    socket.done("k1", { continuation: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.error.value).toBeUndefined();
    expect(text(chat.messages.value[1])).toBe("one two");
  });

  it("#44: the seq records are forgotten when history is cleared", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1"), reply("a1", "base")] });
    await openIdle(socket);
    socket.chunk("k1", { type: "text-delta", id: "t-k1", delta: " live" }, { continuation: true, seq: 0 });
    expect(text(chat.messages.value[1])).toBe("base live");
    chat.clearHistory();
    expect(chat.messages.value).toEqual([]);
    observeThenReplay(socket, "k1", "after the clear");
    expect(texts(chat.messages.value)).toEqual(["after the clear"]);
  });
});

describe("replay batching (item 30)", () => {
  it("#30: a second replay pass with the same start id, before the first was flushed, drops the buffered first pass", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    const pass = textReply("a1", ["one ", "two "]).slice(0, 4);
    // The server replays its buffer twice in one burst (no seq to drop the second by).
    for (const chunk of pass) socket.chunk("r1", chunk, { replay: true });
    for (const chunk of pass) socket.chunk("r1", chunk, { replay: true });
    socket.push(replayComplete("r1"));
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one two "));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(chat.messages.value[1]!.parts.filter((part) => part.type === "text")).toHaveLength(1);
    socket.chunk("r1", { type: "text-delta", id: "t", delta: "three" });
    socket.chunk("r1", { type: "text-end", id: "t" });
    socket.done("r1");
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(text(chat.messages.value[1])).toBe("one two three");
  });
});

describe("cross-tab and observer (items 45-54)", () => {
  it("#49: replay frames of another request that is neither observed nor awaiting replay are ignored", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    await openIdle(socket);
    const before = chat.messages.value;
    textReply("g1", ["replayed"]).forEach((chunk, seq) => socket.chunk("ghost", chunk, { replay: true, seq }));
    socket.push(replayComplete("ghost"));
    await settle();
    expect(chat.messages.value).toBe(before);
    expect(chat.isServerStreaming.value).toBe(false);
    expect(acks(socket)).toEqual([]);
    // A live frame of the same request is observed: the replay was ignored, not lost by accident.
    socket.chunk("ghost", { type: "start", messageId: "g1" });
    socket.chunk("ghost", { type: "text-start", id: "t" });
    socket.chunk("ghost", { type: "text-delta", id: "t", delta: "live" });
    expect(chat.isServerStreaming.value).toBe(true);
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["g1", "live"]
    ]);
  });

  for (const end of ["replayComplete", "done"] as const) {
    it(`#50: on the observer path, replayed chunks reach messages only at ${end}`, async () => {
      const { socket, chat } = setup({ initialMessages: [user("u1")] });
      await openIdle(socket);
      socket.push({ type: "cf_agent_stream_resuming", id: "srv" });
      expect(acks(socket)).toHaveLength(1);
      const before = chat.messages.value;
      const chunks = end === "done" ? textReply("s1", ["one ", "two"]) : textReply("s1", ["one ", "two"]).slice(0, 4);
      chunks.forEach((chunk, seq) => {
        socket.chunk("srv", chunk, { replay: true, seq });
        expect(chat.messages.value).toBe(before);
      });
      if (end === "done") socket.done("srv", { replay: true });
      else socket.push(replayComplete("srv"));
      expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
        ["u1", "u1"],
        ["s1", "one two"]
      ]);
      expect(chat.isServerStreaming.value).toBe(end === "replayComplete");
    });
  }

  it("#52: data-* chunks on the observer path call onData, except replayed chunks already applied (seq)", async () => {
    const data: unknown[] = [];
    const { socket } = setup({ initialMessages: [user("u1"), reply("a1", "base ")], onData: (part) => data.push(part) });
    await openIdle(socket);
    const live = [
      { type: "start" },
      { type: "data-progress", data: { step: 1 } },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "one " }
    ];
    // Another connection's continuation, seen live.
    continuationChunks(socket, "k9", live);
    expect(data).toEqual([{ type: "data-progress", data: { step: 1 } }]);
    // Offered to this socket: the ACK makes the server replay its buffer from chunk 0, plus one new chunk.
    socket.push({ type: "cf_agent_stream_resuming", id: "k9" });
    expect(acks(socket)).toHaveLength(1);
    continuationChunks(socket, "k9", [...live, { type: "data-progress", data: { step: 2 } }], 0, { replay: true });
    socket.push(replayComplete("k9", { continuation: true }));
    expect(data).toEqual([
      { type: "data-progress", data: { step: 1 } },
      { type: "data-progress", data: { step: 2 } }
    ]);
    continuationChunks(socket, "k9", [{ type: "data-progress", data: { step: 3 } }], 5);
    socket.done("k9", { continuation: true });
    expect(data).toHaveLength(3);
  });

  it("#53: chunks of a different stream restart the observer on that stream", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1")] });
    await openIdle(socket);
    for (const chunk of textReply("m1", ["first "]).slice(0, 3)) socket.chunk("s1", chunk);
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["m1", "first "]
    ]);
    const second = textReply("m2", ["second"]);
    for (const chunk of second.slice(0, 3)) socket.chunk("s2", chunk);
    // A fresh message for the new stream: nothing of the first stream's parts carried over.
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["m1", "first "],
      ["m2", "second"]
    ]);
    expect(chat.isServerStreaming.value).toBe(true);
    for (const chunk of second.slice(3)) socket.chunk("s2", chunk);
    socket.done("s2");
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      ["u1", "u1"],
      ["m1", "first "],
      ["m2", "second"]
    ]);
  });
});

describe("transcript (items 55-63)", () => {
  it("#58: a snapshot holding the protected assistant followed by another assistant is taken as it is, and protection ends", async () => {
    const { socket, chat } = setup({ resume: false });
    socket.open();
    const { id } = await send(socket, chat, "q1");
    const userId = chat.messages.value[0]!.id;
    for (const chunk of textReply("a1", ["partial"]).slice(0, 3)) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("partial"));
    socket.push({
      type: "cf_agent_chat_messages",
      messages: [user(userId, "q1"), reply("a1", "stored reply"), user("u2", "next"), reply("a2", "answer")]
    });
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      [userId, "q1"],
      ["a1", "stored reply"],
      ["u2", "next"],
      ["a2", "answer"]
    ]);
    // Protection is over: a snapshot without a1 no longer gets the local copy appended.
    socket.push({ type: "cf_agent_chat_messages", messages: [user(userId, "q1"), user("u2", "next"), reply("a2", "answer")] });
    expect(chat.messages.value.map((m) => m.id)).toEqual([userId, "u2", "a2"]);
  });

  it("#63: a send during a streaming reply keeps that reply last until its turn ends, then puts it back after the message before it", async () => {
    const { socket, chat } = setup({ resume: false });
    socket.open();
    const first = await send(socket, chat, "q1");
    const q1 = chat.messages.value[0]!.id;
    const chunks = textReply("a1", ["partial", " reply"]);
    for (const chunk of chunks.slice(0, 3)) socket.chunk(first.id, chunk);
    await vi.waitFor(() => expect(chat.status.value).toBe("streaming"));
    const second = await send(socket, chat, "q2");
    const q2 = chat.messages.value.find((m) => text(m) === "q2")!.id;
    // The server's transcript meanwhile: q2 stored, the reply not yet.
    socket.push({ type: "cf_agent_chat_messages", messages: [user(q1, "q1"), user(q2, "q2")] });
    expect(chat.messages.value.map((m) => m.id)).toEqual([q1, q2, "a1"]);
    for (const chunk of chunks.slice(3)) socket.chunk(first.id, chunk);
    await vi.waitFor(() => expect(text(chat.messages.value.find((m) => m.id === "a1"))).toBe("partial reply"));
    expect(chat.messages.value.map((m) => m.id)).toEqual([q1, q2, "a1"]);
    socket.done(first.id);
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual([q1, "a1", q2]));
    for (const chunk of textReply("a2", ["second answer"])) socket.chunk(second.id, chunk);
    socket.done(second.id);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => [m.id, text(m)])).toEqual([
      [q1, "q1"],
      ["a1", "partial reply"],
      [q2, "q2"],
      ["a2", "second answer"]
    ]);
  });
});

describe("clear and setMessages (items 64-68)", () => {
  it("#68: setMessages([]) before late initial messages resolve keeps them from being applied", async () => {
    let release!: (messages: UIMessage[]) => void;
    const { socket, chat } = setup({
      resume: false,
      initialMessages: undefined,
      getInitialMessages: () => new Promise<UIMessage[]>((resolve) => (release = resolve))
    });
    socket.open();
    expect(chat.isLoading.value).toBe(true);
    chat.setMessages([]);
    expect(socket.sentOf("cf_agent_chat_messages")).toEqual([{ type: "cf_agent_chat_messages", messages: [] }]);
    release([user("h1"), reply("h2", "stored")]);
    await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
    await settle();
    expect(chat.messages.value).toEqual([]);
  });
});

/** Mounts a chat on `socket` that reads its transcript the default way (or with the given options). */
function mountReader(socket: FakeSocket, options: Partial<UseAgentChatOptions> = {}) {
  const mounted = mountComposable(() => useAgentChat({ agent: socket, resume: false, throttle: false, ...options }));
  cleanup.push(mounted.unmount);
  return mounted.result;
}

describe("initial messages and identity (items 69-77)", () => {
  it("#73: two chats on the same agent make one initial-messages request, and both show it", async () => {
    const read = vi
      .spyOn(globalThis, "fetch")
      .mockImplementation(async () => Response.json([user("h1"), reply("h2", "stored")]));
    const socket = new FakeSocket();
    const chats = [mountReader(socket), mountReader(socket)];
    socket.open();
    for (const chat of chats) {
      await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
      expect(texts(chat.messages.value)).toEqual(["h1", "stored"]);
    }
    expect(read).toHaveBeenCalledTimes(1);
    expect(String(read.mock.calls[0]![0])).toBe("http://fake.test/agents/fake-agent/room/get-messages");
  });

  it("#77: the chat id stays the same when the socket's URL arrives late or the server renames the instance; another agent object changes it", async () => {
    const { shallowRef, nextTick } = await import("vue");
    const socket = new FakeSocket();
    socket._pkurl = "";
    const agent = shallowRef<FakeSocket>(socket);
    const mounted = mountComposable(() =>
      useAgentChat({ agent, initialMessages: [user("u1")], resume: false, throttle: false })
    );
    cleanup.push(mounted.unmount);
    const chat = mounted.result;
    const id = chat.id.value;
    expect(id).not.toBe("");
    expect(chat.chat.id).toBe(id);
    // The URL resolves once the socket connects; the server then names the instance it picked.
    socket._pkurl = "ws://fake.test/agents/fake-agent/room";
    socket.open();
    socket.name = "server-picked";
    await settle();
    expect(chat.id.value).toBe(id);
    expect(chat.chat.id).toBe(id);
    expect(texts(chat.messages.value)).toEqual(["u1"]);

    const other = new FakeSocket();
    other.name = "other-room";
    other._pkurl = "ws://fake.test/agents/fake-agent/other-room";
    agent.value = other;
    await nextTick();
    expect(chat.id.value).not.toBe(id);
    expect(chat.chat.id).toBe(chat.id.value);
  });
});

describe("recovery (items 99-101)", () => {
  const releases = [
    {
      name: "recovering: false",
      release: (socket: FakeSocket) => socket.push({ type: "cf_agent_chat_recovering", recovering: false })
    },
    { name: "a live frame of another request", release: (socket: FakeSocket) => socket.done("r2") },
    {
      name: "an idle probe answer",
      release: async (socket: FakeSocket, chat: ReturnType<typeof setup>["chat"]) => {
        void chat.resumeStream();
        await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
        socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
      }
    }
  ];
  for (const { name, release } of releases) {
    it(`#101: after done with outcome recovering, tool calls stay held until ${name}`, async () => {
      const { calls, onToolCall } = recordCalls();
      const { socket, chat } = setup({ onToolCall, initialMessages: [user("u1")] });
      await openIdle(socket);
      socket.done("r1", { outcome: "recovering" });
      socket.push({ type: "cf_agent_chat_messages", messages: waitingForAnswer() });
      await settle();
      expect(calls).toHaveLength(0);
      // Frames that prove nothing: the recovering request's own, a replay, a skipped send.
      socket.done("r1", { outcome: "recovering", replay: true });
      socket.done("r3", { replay: true });
      socket.done("r4", { outcome: "skipped" });
      await settle();
      expect(calls).toHaveLength(0);
      await release(socket, chat);
      await vi.waitFor(() => expect(calls).toHaveLength(1));
      expect(calls[0]!.toolCall.toolCallId).toBe("c1");
    });
  }
});

describe("misc (items 102-106)", () => {
  it("#102: while submitted, isStreaming is false unless a server stream or client tool work is active", async () => {
    const { socket, chat } = setup({ resume: false, initialMessages: [user("u1")] });
    socket.open();
    const { id } = await send(socket, chat, "q");
    expect(chat.status.value).toBe("submitted");
    expect(chat.isStreaming.value).toBe(false);
    // Another connection's turn streams to this socket meanwhile.
    socket.chunk("other", { type: "start", messageId: "o1" });
    socket.chunk("other", { type: "text-delta", id: "t", delta: "elsewhere" });
    expect(chat.status.value).toBe("submitted");
    expect(chat.isStreaming.value).toBe(true);
    socket.done("other");
    expect(chat.isStreaming.value).toBe(false);
    for (const chunk of textReply("a1", ["ok"])) socket.chunk(id, chunk);
    socket.done(id);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
  });

  it("#102: while a tool continuation is submitted, a running onToolCall keeps isStreaming true until it answers", async () => {
    let answerSecond!: () => void;
    const onToolCall: OnToolCallCallback = ({ toolCall, addToolOutput }) => {
      if (toolCall.toolCallId === "c1") {
        addToolOutput({ toolCallId: "c1", output: "first" });
        return;
      }
      return new Promise<void>((resolve) => {
        answerSecond = () => {
          addToolOutput({ toolCallId: "c2", output: "second" });
          resolve();
        };
      });
    };
    const twoCalls: UIMessage[] = [
      user("u1", "ask me twice"),
      {
        id: "a1",
        role: "assistant",
        parts: [{ type: "step-start" }, tool("askUser", "c1", "input-available"), tool("askUser", "c2", "input-available")]
      }
    ];
    const { socket, chat } = setup({ onToolCall, initialMessages: twoCalls });
    await openIdle(socket);
    await vi.waitFor(() => expect(chat.status.value).toBe("submitted"));
    expect(chat.isToolContinuation.value).toBe(true);
    expect(chat.isStreaming.value).toBe(true);
    answerSecond();
    await vi.waitFor(() => expect(chat.isStreaming.value).toBe(false));
    expect(chat.status.value).toBe("submitted");
  });

  it("#106: the id option is ignored; the chat id comes from the agent's address", () => {
    const withId = setup({ id: "my-own-id" });
    const without = setup({});
    expect(withId.chat.id.value).not.toBe("my-own-id");
    expect(withId.chat.id.value).toBe(without.chat.id.value);
    expect(withId.chat.chat.id).toBe(withId.chat.id.value);
  });
});

/** A WebSocket the test plays the server of; PartySocket creates one per connection attempt. */
class ScriptedWebSocket extends EventTarget {
  static readonly created: ScriptedWebSocket[] = [];
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readyState = 0;
  binaryType = "blob";
  bufferedAmount = 0;
  extensions = "";
  protocol = "";
  readonly sent: string[] = [];

  constructor(readonly url: string) {
    super();
    ScriptedWebSocket.created.push(this);
  }

  send(data: string) {
    this.sent.push(data);
  }

  close(code = 1000, reason = "") {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.dispatchEvent(new CloseEvent("close", { code, reason, wasClean: true }));
  }

  open() {
    this.readyState = 1;
    this.dispatchEvent(new Event("open"));
  }

  receive(frame: Record<string, unknown>) {
    this.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(frame) }));
  }

  drop() {
    this.readyState = 3;
    this.dispatchEvent(new CloseEvent("close", { code: 1006, reason: "", wasClean: false }));
  }
}

/** Waits for the connection attempt number `index` (0-based), opens it and sends the server's identity. */
async function connectAs(index: number, name: string) {
  await vi.waitFor(() => expect(ScriptedWebSocket.created).toHaveLength(index + 1));
  const ws = ScriptedWebSocket.created[index]!;
  ws.open();
  ws.receive({ type: "cf_agent_identity", agent: "chat-agent", name });
  return ws;
}

describe("useAgent (items 107-115)", () => {
  for (const handled of [true, false]) {
    it(`#108: an identity change on reconnect ${handled ? "calls onIdentityChange" : "logs a warning when there is no onIdentityChange"}`, async () => {
      const { useAgent } = await import("../../src");
      ScriptedWebSocket.created.length = 0;
      const changes: string[][] = [];
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const mounted = mountComposable(() =>
        useAgent({
          agent: "ChatAgent",
          name: "room",
          host: "fake.test",
          WebSocket: ScriptedWebSocket as unknown as typeof WebSocket,
          minReconnectionDelay: 0,
          maxReconnectionDelay: 0,
          ...(handled ? { onIdentityChange: (...args: string[]) => void changes.push(args) } : {})
        })
      );
      cleanup.push(mounted.unmount);
      const agent = mounted.result;
      const first = await connectAs(0, "room");
      expect(agent.identity.value).toEqual({ agent: "chat-agent", name: "room" });
      first.drop();
      // The same address reached the same instance: no change.
      const second = await connectAs(1, "room");
      second.drop();
      // Server-side routing picked another instance this time.
      await connectAs(2, "elsewhere");
      expect(agent.identity.value).toEqual({ agent: "chat-agent", name: "elsewhere" });
      const identityWarnings = () => warn.mock.calls.filter((args) => String(args[0]).includes("elsewhere"));
      expect(changes).toEqual(handled ? [["room", "elsewhere", "chat-agent", "chat-agent"]] : []);
      // Without the callback, one warning naming both instances.
      expect(identityWarnings().map((args) => String(args[0]).includes("room"))).toEqual(handled ? [] : [true]);
    });
  }
});
