/**
 * Regression tests for failures the chaos suite found (RELIABILITY.md lists
 * them). Each replays, on a scripted socket, the frames that broke the chat.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type UseAgentChatOptions, useAgentChat } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
});

/** A chat on a scripted socket, unthrottled; `options` add to (or replace) that. */
function setupWith(options: Partial<UseAgentChatOptions>) {
  const socket = new FakeSocket();
  const mounted = mountComposable(() => useAgentChat({ agent: socket, throttle: false, ...options }));
  cleanup.push(mounted.unmount);
  return { socket, chat: mounted.result };
}

const setup = (initialMessages: UIMessage[]) => setupWith({ initialMessages });

const probes = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_request");

/** Opens the socket and answers the mount probe: nothing is streaming. */
async function openIdle(socket: FakeSocket) {
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
  socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
}
const textParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((part) => part.type === "text");

/** Waits for this client's one chat request and returns its id. */
async function requestId(socket: FakeSocket): Promise<string> {
  await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
  return socket.sentOf("cf_agent_use_chat_request")[0]!.id as string;
}

/**
 * A chat whose transcript reads answer with `server.stored` (the test sets
 * it as the server would store it) and are counted in `server.reads`; open,
 * loaded, and sending as "u1".
 */
async function openWithStore() {
  const server = { reads: 0, stored: [] as UIMessage[] };
  const { socket, chat } = setupWith({
    generateId: () => "u1",
    getInitialMessages: () => {
      server.reads++;
      return Promise.resolve(server.stored.map((m) => ({ ...m })));
    }
  });
  await openIdle(socket);
  await chat.ready;
  return { socket, chat, server };
}

/** Starts reply `messageId` of request `id` with one text part holding `text`. */
function startText(socket: FakeSocket, id: string, messageId: string, text: string) {
  socket.chunk(id, { type: "start", messageId });
  socket.chunk(id, { type: "text-start", id: "t" });
  socket.chunk(id, { type: "text-delta", id: "t", delta: text });
}

/** A turn the server restart cut off: its text part is still streaming in storage. */
const interrupted = (): UIMessage[] => [
  { id: "u1", role: "user", parts: [{ type: "text", text: "during" }] },
  { id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "w0 w1 ", state: "streaming" }] }
];

/**
 * After a restart `AIChatAgent` recovers the interrupted turn with a
 * continuation. When the message's last text part is still streaming, the
 * server drops the continuation's `text-start` and appends its deltas to that
 * part, so the continuation's `text-delta`s name a part this stream never
 * opened.
 */
function recoveryContinuation(socket: FakeSocket, id: string, extra: Record<string, unknown> = {}) {
  const chunks = [
    { type: "start" },
    { type: "start-step" },
    { type: "text-delta", id: "text-0", delta: "w2 " },
    { type: "text-delta", id: "text-0", delta: "w3 " },
    { type: "text-end", id: "text-0" },
    { type: "finish-step" },
    { type: "finish" }
  ];
  chunks.forEach((chunk, seq) => socket.chunk(id, chunk, { continuation: true, seq, ...extra }));
  socket.push({ type: "cf_agent_use_chat_response", id, body: "", done: true, continuation: true });
}

/** What the server stores: the deltas in the interrupted part, the new step after it. */
const recovered = [{ type: "step-start" }, { type: "text", text: "w0 w1 w2 w3 " }, { type: "step-start" }];
const shapeOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? { type: "text", text: part.text } : { type: part.type }));

describe("server restart mid-stream (chaos: server restart)", () => {
  it("an observed recovery continuation continues the interrupted text part instead of adding a second one", async () => {
    const { socket, chat } = setup(interrupted());
    await openIdle(socket);
    recoveryContinuation(socket, "rec1");
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(textParts(chat.messages.value[1])).toHaveLength(1);
    expect(shapeOf(chat.messages.value[1])).toEqual(recovered);
  });

  it("an attached recovery continuation whose text-start the server dropped ends ready, in the interrupted text part", async () => {
    const { socket, chat } = setup(interrupted());
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "rec1", probeId: probes(socket)[0]!.probeId });
    expect(socket.sentOf("cf_agent_stream_resume_ack")).toHaveLength(1);
    recoveryContinuation(socket, "rec1");
    // Without the fix the AI SDK fails on the first delta ("missing text part") and the text never lands.
    await vi.waitFor(() => expect(shapeOf(chat.messages.value[1])).toEqual(recovered));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.error.value).toBeUndefined();
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(textParts(chat.messages.value[1])).toHaveLength(1);
  });
});

describe("a clear while this client's reply streams (chaos: many clients)", () => {
  it("the reply stays after the stored messages the read after the clear brings, instead of jumping to the front", async () => {
    // What the server holds once the clear is through: another client's turn stored since.
    const stored: UIMessage[] = [
      { id: "u-other", role: "user", parts: [{ type: "text", text: "from another tab" }] },
      { id: "a-other", role: "assistant", parts: [{ type: "text", text: "answer" }] }
    ];
    let reads = 0;
    let answerRead: (() => void) | undefined;
    const { socket, chat } = setupWith({
      getInitialMessages: () =>
        reads++ === 0
          ? Promise.resolve([])
          : new Promise<UIMessage[]>((resolve) => (answerRead = () => resolve(stored.map((m) => ({ ...m })))))
    });
    await openIdle(socket);
    await chat.ready;
    const sent = chat.sendMessage({ text: "mine" });
    const id = await requestId(socket);
    // Another client clears before the reply starts; this client re-reads the stored transcript,
    // and the read lands while the reply streams into the emptied transcript.
    socket.push({ type: "cf_agent_chat_clear" });
    await vi.waitFor(() => expect(reads).toBe(2));
    startText(socket, id, "a-mine", "my ");
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toContain("a-mine"));
    answerRead!();
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toContain("u-other"));
    socket.chunk(id, { type: "text-delta", id: "t", delta: "reply" });
    socket.chunk(id, { type: "text-end", id: "t" });
    socket.chunk(id, { type: "finish" });
    socket.done(id);
    await sent;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u-other", "a-other", "a-mine"]);
  });
});

/**
 * How the server answers an ACK it takes after the resumed turn's stream
 * closed; either way what streamed while the socket was down is not replayed.
 */
const lateAckAnswers: Array<[how: string, frames: (id: string) => Array<Record<string, unknown>>]> = [
  [
    "ended before the server took the ACK",
    // Settled and stored: the held end goes out, then a replay with nothing but the end.
    (id) => [
      { type: "cf_agent_use_chat_response", id, body: "", done: true },
      { type: "cf_agent_use_chat_response", id, body: "", done: true, replay: true }
    ]
  ],
  [
    "replayed nothing because the server was storing its reply when it took the ACK",
    // Finished while the reply was being stored: the stream's rows are gone,
    // so the replay is only its end marker, and the held end follows it live.
    (id) => [
      { type: "cf_agent_use_chat_response", id, body: "", done: false, replay: true, replayComplete: true },
      { type: "cf_agent_use_chat_response", id, body: "", done: true }
    ]
  ]
];

describe("a socket drop near the end of a turn (chaos: socket drops)", () => {
  for (const [how, answer] of lateAckAnswers) {
    it(`a resumed stream that ${how} is completed from the stored transcript`, async () => {
      const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "turn" }] };
      const { socket, chat, server } = await openWithStore();
      const sent = chat.sendMessage({ text: "turn" });
      const id = await requestId(socket);
      startText(socket, id, "a1", "w0 w1 ");
      await vi.waitFor(() => expect(textParts(chat.messages.value[1])[0]?.text).toBe("w0 w1 "));
      // The socket drops; the turn streams on, unseen, while it is down.
      socket.drop();
      server.stored = [question];
      socket.open();
      await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
      const readsAtReconnect = await vi.waitFor(() => {
        expect(server.reads).toBeGreaterThanOrEqual(2);
        return server.reads;
      });
      socket.push({ type: "cf_agent_stream_resuming", id, probeId: probes(socket)[1]!.probeId });
      await vi.waitFor(() => expect(socket.sentOf("cf_agent_stream_resume_ack")).toHaveLength(1));
      // The turn ends and its reply is stored before the server takes the ACK.
      server.stored = [question, { id: "a1", role: "assistant", parts: [{ type: "text", text: "w0 w1 w2 w3 " }] }];
      for (const frame of answer(id)) socket.push(frame);
      await sent;
      await vi.waitFor(() => expect(server.reads).toBe(readsAtReconnect + 1));
      await vi.waitFor(() => expect(textParts(chat.messages.value[1]).map((part) => part.text)).toEqual(["w0 w1 w2 w3 "]));
      expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
      await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
      expect(textParts(chat.messages.value[1]).map((part) => part.text)).toEqual(["w0 w1 w2 w3 "]);
    });
  }
});

/** Chunk `seq` of a reply "a1": 0 is its start, 1 its text-start, 2 + i the delta of word i. */
const chunkAt = (seq: number) =>
  seq === 0 ? { type: "start", messageId: "a1" } : seq === 1 ? { type: "text-start", id: "text-0" } : { type: "text-delta", id: "text-0", delta: `w${seq - 2} ` };

describe("a live chunk that comes between the ACK and its replay (chaos: socket drops, two drops one chunk apart)", () => {
  it("is held until the replay completes, so the reply streams on in one message", async () => {
    const { socket, chat, server } = await openWithStore();
    const sent = chat.sendMessage({ text: "turn" });
    const id = await requestId(socket);
    for (let seq = 0; seq <= 4; seq++) socket.chunk(id, chunkAt(seq), { seq });
    await vi.waitFor(() => expect(textParts(chat.messages.value[1])[0]?.text).toBe("w0 w1 w2 "));
    socket.drop();
    server.stored = [{ id: "u1", role: "user", parts: [{ type: "text", text: "turn" }] }];
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id, probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_stream_resume_ack")).toHaveLength(1));
    // The server unparks the socket on the ACK, a live chunk goes out, and then the replay, which carries it again.
    socket.chunk(id, chunkAt(6), { seq: 6 });
    for (let seq = 0; seq <= 6; seq++) socket.chunk(id, chunkAt(seq), { seq, replay: true });
    socket.push({ type: "cf_agent_use_chat_response", id, body: "", done: false, replay: true, replayComplete: true });
    socket.chunk(id, chunkAt(7), { seq: 7 });
    socket.chunk(id, { type: "text-end", id: "text-0" }, { seq: 8 });
    socket.chunk(id, { type: "finish" }, { seq: 9 });
    socket.done(id);
    await sent;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(textParts(chat.messages.value[1]).map((part) => part.text)).toEqual(["w0 w1 w2 w3 w4 w5 "]);
  });
});

describe("a read-back after a socket drop near the end of a turn (chaos: socket drops)", () => {
  it("the read-back when the resumed turn ends starts a new transcript read instead of joining one begun before the reply was stored", async () => {
    const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "turn" }] };
    const answered: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "w0 w1 w2 w3 " }] };
    // Every transcript read waits until the test answers it.
    const reads: Array<(messages: UIMessage[]) => void> = [];
    const fetches = vi.spyOn(globalThis, "fetch").mockImplementation(
      () => new Promise<Response>((resolve) => reads.push((messages) => resolve(Response.json(messages))))
    );
    cleanup.push(() => fetches.mockRestore());
    const { socket, chat } = setupWith({ generateId: () => "u1" });
    await openIdle(socket);
    await vi.waitFor(() => expect(reads).toHaveLength(1));
    reads[0]!([]);
    await chat.ready;
    const sent = chat.sendMessage({ text: "turn" });
    const id = await requestId(socket);
    startText(socket, id, "a1", "w0 w1 ");
    await vi.waitFor(() => expect(textParts(chat.messages.value[1])[0]?.text).toBe("w0 w1 "));
    socket.drop();
    socket.open();
    // The reconnect's read goes out before the server has stored the reply, and is slow.
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id, probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_stream_resume_ack")).toHaveLength(1));
    socket.push({ type: "cf_agent_use_chat_response", id, body: "", done: true });
    socket.push({ type: "cf_agent_use_chat_response", id, body: "", done: true, replay: true });
    await sent;
    await vi.waitFor(() => expect(reads).toHaveLength(3));
    reads[1]!([question]);
    reads[2]!([question, answered]);
    await vi.waitFor(() => expect(textParts(chat.messages.value[1]).map((part) => part.text)).toEqual(["w0 w1 w2 w3 "]));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(chat.status.value).toBe("ready");
  });
});

/** One answered question, as the server stores it. */
const turn = (): UIMessage[] => [
  { id: "u1", role: "user", parts: [{ type: "text", text: "question" }] },
  { id: "a1", role: "assistant", parts: [{ type: "text", text: "first answer" }] }
];

/**
 * A chat whose transcript reads wait for the test to answer them
 * (`reads[n](messages)`), open, with its first load answered by `turn()`.
 */
async function openWithHeldReads(options: Partial<UseAgentChatOptions> = {}) {
  const reads: Array<(messages: UIMessage[]) => void> = [];
  const { socket, chat } = setupWith({
    ...options,
    getInitialMessages: () => new Promise<UIMessage[]>((resolve) => reads.push(resolve))
  });
  await openIdle(socket);
  await vi.waitFor(() => expect(reads).toHaveLength(1));
  reads[0]!(turn());
  await chat.ready;
  return { socket, chat, reads };
}

/** The reply another tab streams in `regenerateWhileAnotherTabStreams`, as the server stores it. */
const otherTabReply: UIMessage = { id: "a2", role: "assistant", parts: [{ type: "text", text: "other tab" }] };

/**
 * On a chat showing `turn()`: another tab's reply "a2" streams, this client
 * regenerates meanwhile (which removes "a2" here), the other tab's turn ends
 * with its broadcast, and the regenerate's reply "a3" completes.
 */
async function regenerateWhileAnotherTabStreams(socket: FakeSocket, chat: ReturnType<typeof useAgentChat>) {
  socket.chunk("other", { type: "start", messageId: "a2" });
  socket.chunk("other", { type: "text-start", id: "o" });
  socket.chunk("other", { type: "text-delta", id: "o", delta: "other tab" });
  await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "a2"]));
  const regenerated = chat.regenerate();
  const id = await requestId(socket);
  expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
  socket.chunk("other", { type: "text-end", id: "o" });
  socket.chunk("other", { type: "finish" });
  socket.push({ type: "cf_agent_chat_messages", messages: [...turn(), otherTabReply] });
  socket.done("other");
  // While the regenerate is in flight the removed reply stays out (the broadcast may be stale).
  expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
  startText(socket, id, "a3", "new answer");
  socket.chunk(id, { type: "text-end", id: "t" });
  socket.chunk(id, { type: "finish" });
  socket.done(id);
  await regenerated;
}

describe("a broadcast that overtakes this client's regenerate (chaos: many clients)", () => {
  it("a transcript the server sent before it took the regenerate does not bring back the regenerated reply", async () => {
    const { socket, chat } = setup(turn());
    await openIdle(socket);
    const regenerated = chat.regenerate();
    const id = await requestId(socket);
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1"]);
    // Another tab's tool continuation finished a1 before the server took the regenerate.
    const extended = turn();
    extended[1]!.parts.push({ type: "text", text: "after tools" });
    socket.push({ type: "cf_agent_chat_messages", messages: extended });
    startText(socket, id, "a2", "second answer");
    socket.chunk(id, { type: "text-end", id: "t" });
    socket.chunk(id, { type: "finish" });
    socket.done(id);
    await regenerated;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a2"]);
    // Once the regenerate settled, the server's word counts again.
    socket.push({ type: "cf_agent_chat_messages", messages: [...turn(), { id: "u2", role: "user", parts: [{ type: "text", text: "next" }] }] });
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "u2"]);
  });

  it("another tab's continuation of the reply this client regenerates does not land in the reply before it", async () => {
    const transcript: UIMessage[] = [
      ...turn(),
      { id: "u2", role: "user", parts: [{ type: "text", text: "second" }] },
      { id: "a2", role: "assistant", parts: [{ type: "text", text: "asks a tool" }] }
    ];
    const { socket, chat } = setup(transcript);
    await openIdle(socket);
    // Another tab answered a2's tool call; the server continues a2 and this tab watches.
    socket.chunk("k1", { type: "start" }, { continuation: true });
    socket.chunk("k1", { type: "text-start", id: "c" }, { continuation: true });
    socket.chunk("k1", { type: "text-delta", id: "c", delta: " after tools" }, { continuation: true });
    await vi.waitFor(() => expect(textParts(chat.messages.value[3]).map((p) => p.text)).toContain(" after tools"));
    const regenerated = chat.regenerate();
    const id = await requestId(socket);
    socket.chunk("k1", { type: "text-delta", id: "c", delta: " more" }, { continuation: true });
    socket.chunk("k1", { type: "text-end", id: "c" }, { continuation: true });
    socket.chunk("k1", { type: "finish" }, { continuation: true });
    const continued = transcript.map((m) => ({ ...m }));
    continued[3] = { ...continued[3]!, parts: [...continued[3]!.parts, { type: "text", text: " after tools more" }] };
    socket.push({ type: "cf_agent_chat_messages", messages: continued });
    socket.done("k1", { continuation: true });
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "u2"]);
    expect(textParts(chat.messages.value[1]).map((p) => p.text)).toEqual(["first answer"]);
    // Then the server takes the regenerate.
    startText(socket, id, "a3", "new answer");
    socket.chunk(id, { type: "text-end", id: "t" });
    socket.chunk(id, { type: "finish" });
    socket.done(id);
    await regenerated;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "u2", "a3"]);
    expect(textParts(chat.messages.value[1]).map((p) => p.text)).toEqual(["first answer"]);
  });

  it("a reply another tab was streaming when this client regenerated, which the server kept, is read back once the regenerate settles", async () => {
    const transcript = turn();
    // The server stored the other tab's reply after it took the regenerate, so it keeps it.
    const stored: UIMessage[] = [
      ...transcript,
      otherTabReply,
      { id: "a3", role: "assistant", parts: [{ type: "text", text: "new answer" }] }
    ];
    let reads = 0;
    const { socket, chat } = setupWith({
      initialMessages: transcript,
      getInitialMessages: () => {
        reads++;
        return Promise.resolve(stored.map((m) => ({ ...m })));
      }
    });
    await openIdle(socket);
    await regenerateWhileAnotherTabStreams(socket, chat);
    await vi.waitFor(() => expect(reads).toBe(1));
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "a2", "a3"]));
  });

  it("an edit's dropped follow-ups stay dropped when an older transcript arrives before its reply", async () => {
    const longer = [
      ...turn(),
      { id: "u2", role: "user", parts: [{ type: "text", text: "second" }] },
      { id: "a2", role: "assistant", parts: [{ type: "text", text: "second answer" }] }
    ] as UIMessage[];
    const { socket, chat } = setup(longer);
    await openIdle(socket);
    const edited = chat.sendMessage({ text: "question, edited", messageId: "u1" });
    const id = await requestId(socket);
    socket.push({ type: "cf_agent_chat_messages", messages: longer });
    startText(socket, id, "a3", "edited answer");
    socket.chunk(id, { type: "text-end", id: "t" });
    socket.chunk(id, { type: "finish" });
    socket.done(id);
    await edited;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a3"]);
    expect(textParts(chat.messages.value[0]).map((p) => p.text)).toEqual(["question, edited"]);
  });
});

describe("a broadcast that overtakes this client's clear (chaos: many clients)", () => {
  it("a transcript the server sent before it took this client's clear does not bring back the cleared messages", async () => {
    const { socket, chat, reads } = await openWithHeldReads();
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]);
    chat.clearHistory();
    expect(socket.sentOf("cf_agent_chat_clear")).toHaveLength(1);
    // The sender reads the stored transcript at once; the server never echoes its clear.
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    // Frames the server sent before it took the clear (a finished turn's broadcast and update).
    socket.push({ type: "cf_agent_chat_messages", messages: turn() });
    socket.push({ type: "cf_agent_message_updated", message: turn()[1] });
    expect(chat.messages.value).toEqual([]);
    // Those frames overtook the read, so its answer may be older than they are: it is made again.
    reads[1]!([]);
    await vi.waitFor(() => expect(reads).toHaveLength(3));
    expect(chat.messages.value).toEqual([]);
    reads[2]!([]);
    // Let the read's answer land (a task later) before the next frame.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.messages.value).toEqual([]);
    // Once the read confirmed the clear, the server's word counts again, old ids included
    // (another tab that missed the clear can send them back).
    socket.push({ type: "cf_agent_chat_messages", messages: turn() });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]));
  });
});

describe("a send from another tab that the server took just before this client's clear (chaos: many clients)", () => {
  it("messages first seen during the clear's hold that the stored transcript lacks are dropped when the read answers", async () => {
    const { socket, chat, reads } = await openWithHeldReads();
    chat.clearHistory();
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    // Sent before the server took the clear: another tab's question and the start of its reply.
    const question: UIMessage = { id: "u2", role: "user", parts: [{ type: "text", text: "from another tab" }] };
    socket.push({ type: "cf_agent_chat_messages", messages: [...turn(), question] });
    socket.chunk("other", { type: "start", messageId: "a2" });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u2", "a2"]));
    // The clear aborted that turn before its reply had a part, and emptied the transcript.
    // (The transcript frame overtook the first read, so the answer that counts is the second's.)
    reads[1]!([]);
    await vi.waitFor(() => expect(reads).toHaveLength(3));
    reads[2]!([]);
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).not.toContain("u2"));
    socket.done("other", { outcome: "aborted" });
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    expect(chat.messages.value).toEqual([]);
  });
});

describe("a send right after this client's clear", () => {
  it("a message this client sent after its clear stays when a broadcast carries it before the read that lacks it answers", async () => {
    const { socket, chat, reads } = await openWithHeldReads({ generateId: () => "u3" });
    chat.clearHistory();
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    void chat.sendMessage({ text: "after the clear" }).catch(() => {});
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const mine = chat.messages.value.find((m) => m.id === "u3")!;
    socket.push({ type: "cf_agent_chat_messages", messages: [mine] });
    reads[1]!([]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u3"]);
  });
});

describe("a send behind a request that fails (model property test)", () => {
  it("the first request's failure does not confirm the second send, so another tab's older list leaves it on screen", async () => {
    const { socket, chat } = setupWith({});
    await openIdle(socket);
    await chat.ready;
    void chat.sendMessage({ text: "one" }).catch(() => {});
    void chat.sendMessage({ text: "two" }).catch(() => {});
    // The AI SDK builds each request's list as it goes out: both carry both messages.
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(2));
    const [first, second] = socket.sentOf("cf_agent_use_chat_request").map((frame) => frame.id as string);
    const [one, two] = chat.messages.value;
    socket.push({ type: "cf_agent_use_chat_response", id: first, body: "boom", done: true, error: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    // Another tab's setMessages list, written before the server took the second send.
    socket.push({ type: "cf_agent_chat_messages", messages: [one] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.messages.value.map((m) => m.id)).toEqual([one!.id, two!.id]);
    for (const chunk of textReply("a2", ["two back"])) socket.chunk(second!, chunk);
    socket.done(second!);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual([one!.id, two!.id, "a2"]);
  });
});

describe("a turn that ends before its reply has a part (chaos: many clients)", () => {
  it("another tab's turn that ended right after its start leaves no empty reply, as the server stores none", async () => {
    const { socket, chat } = setup(turn());
    await openIdle(socket);
    socket.chunk("other", { type: "start", messageId: "a-empty" });
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(true));
    socket.push({ type: "cf_agent_use_chat_response", id: "other", body: "The model failed", done: true, error: true });
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]));
  });

  it("this client's turn that ended right after its start leaves no empty reply, and its question stays", async () => {
    const { socket, chat } = setupWith({ generateId: () => "u2", initialMessages: turn() });
    await openIdle(socket);
    const sent = chat.sendMessage({ text: "again" });
    const id = await requestId(socket);
    socket.chunk(id, { type: "start", messageId: "a-empty" });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toContain("a-empty"));
    socket.done(id);
    await sent;
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "u2"]));
  });

  it("a reply that ended with parts stays", async () => {
    const { socket, chat } = setup(turn());
    await openIdle(socket);
    socket.chunk("other", { type: "start", messageId: "a2" });
    socket.chunk("other", { type: "start-step" });
    socket.done("other");
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "a2"]));
  });
});

describe("a clear that interrupts this client's turn, on a server that names no outcome (chaos: many clients, compat)", () => {
  for (const outcome of ["aborted", undefined] as const) {
    it(`the turn's end (outcome ${String(outcome)}) re-reads the stored transcript, which keeps the partial reply`, async () => {
      const partial: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "w0 w1 " }] };
      let reads = 0;
      const { socket, chat } = setupWith({
        // The first load and the read the clear makes at once come before the server stored the partial reply.
        getInitialMessages: () => Promise.resolve(reads++ < 2 ? [] : [partial])
      });
      await openIdle(socket);
      await chat.ready;
      void chat.sendMessage({ text: "question" }).catch(() => {});
      const id = await requestId(socket);
      startText(socket, id, "a1", "w0 w1 ");
      await vi.waitFor(() => expect(chat.messages.value).toHaveLength(2));
      chat.clearHistory();
      expect(chat.messages.value).toEqual([]);
      expect(reads).toBe(2);
      // The server aborts the turn and stores its partial reply after the clear emptied the transcript.
      socket.done(id, outcome ? { outcome } : {});
      await vi.waitFor(() => expect(reads).toBe(3));
      await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["a1"]));
    });
  }
});

describe("a reply a clear cut that the server never stores (chaos seed 835076279, many clients)", () => {
  // The agent let the turn run on after the clear and stored nothing of it; this screen rebuilt the reply from the
  // chunks after the clear, and the read the turn's end made (lacking it) was merged like any other.
  for (const whose of ["this client's", "another tab's"] as const) {
    for (const stored of [false, true]) {
      it(`${whose} reply, rebuilt after the clear, ${stored ? "stays when the read its end makes holds it" : "goes when the read its end makes lacks it"}`, async () => {
        const partial: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "w0 w1 w2 w3 ", state: "done" }] };
        let reads = 0;
        const { socket, chat } = setupWith({ getInitialMessages: () => Promise.resolve(reads++ < 2 || !stored ? [] : [partial]) });
        await openIdle(socket);
        await chat.ready;
        let id = "other-request";
        if (whose === "this client's") {
          void chat.sendMessage({ text: "question" }).catch(() => {});
          id = await requestId(socket);
        }
        startText(socket, id, "a1", "w0 w1 ");
        await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toContain("a1"));
        chat.clearHistory();
        expect(chat.messages.value).toEqual([]);
        // The clear's read answers (the clear's hold ends) before the turn goes on.
        await vi.waitFor(() => expect(reads).toBe(2));
        await new Promise((resolve) => setTimeout(resolve, 20));
        // The turn runs on: its chunks after the clear build the reply again here.
        socket.chunk(id, { type: "text-delta", id: "t", delta: "w2 w3 " });
        await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["a1"]));
        socket.chunk(id, { type: "text-end", id: "t" });
        socket.chunk(id, { type: "finish" });
        socket.done(id);
        await vi.waitFor(() => expect(reads).toBe(3));
        await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(chat.messages.value.map((m) => m.id)).toEqual(stored ? ["a1"] : []);
      });
    }
  }
});

describe("a stop the server took too late (chaos: many clients)", () => {
  for (const outcome of ["completed", "aborted"] as const) {
    it(`a turn this client stopped before its reply started, which the server stored anyway (outcome ${outcome}), is read back`, async () => {
      const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "question" }] };
      const answered: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "answer" }] };
      const { socket, chat, server } = await openWithStore();
      const readsBefore = server.reads;
      const sent = chat.sendMessage({ text: "question" }).catch(() => {});
      const id = await requestId(socket);
      await chat.stop();
      await sent;
      expect(socket.sentOf("cf_agent_chat_request_cancel")).toHaveLength(1);
      // The server had already run the turn to its end.
      server.stored = [question, answered];
      startText(socket, id, "a1", "answer");
      socket.chunk(id, { type: "text-end", id: "t" });
      socket.chunk(id, { type: "finish" });
      socket.done(id, { outcome });
      await vi.waitFor(() => expect(server.reads).toBe(readsBefore + 1));
      await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]));
      expect(textParts(chat.messages.value[1]).map((p) => p.text)).toEqual(["answer"]);
      expect(chat.status.value).toBe("ready");
    });
  }
});

describe("a transcript read that a transcript frame overtakes (chaos: many clients)", () => {
  it("a read after another tab's clear that answers with a reply a later frame removed is made again, and the reply stays out", async () => {
    const { socket, chat, reads } = await openWithHeldReads();
    // Another tab clears; the server then stores a cut-off reply, and this client reads.
    socket.push({ type: "cf_agent_chat_clear" });
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    const cutOff: UIMessage = { id: "a9", role: "assistant", parts: [{ type: "text", text: "cut off" }] };
    // A third tab's regenerate removes that reply; its transcript comes before the read's answer,
    // which the server made before it took the regenerate.
    socket.push({ type: "cf_agent_chat_messages", messages: [] });
    reads[1]!([cutOff]);
    // The answer is older than the frame: the client reads again instead of putting the reply back.
    await vi.waitFor(() => expect(reads).toHaveLength(3));
    expect(chat.messages.value).toEqual([]);
    reads[2]!([]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.messages.value).toEqual([]);
  });

  it("the read-back after this client's regenerate does not bring back its reply that another tab's later send removed", async () => {
    const transcript = turn();
    const reads: Array<(messages: UIMessage[]) => void> = [];
    const { socket, chat } = setupWith({
      initialMessages: transcript,
      getInitialMessages: () => new Promise<UIMessage[]>((resolve) => reads.push(resolve))
    });
    await openIdle(socket);
    const withOther = [...transcript, otherTabReply];
    await regenerateWhileAnotherTabStreams(socket, chat);
    // The regenerate settled, so this client reads what the server kept.
    await vi.waitFor(() => expect(reads).toHaveLength(1));
    // Meanwhile a tab that never saw "a3" sends; the server stores its list, without "a3".
    socket.push({ type: "cf_agent_chat_messages", messages: withOther });
    const stale = [...withOther, { id: "a3", role: "assistant", parts: [{ type: "text", text: "new answer" }] }] as UIMessage[];
    reads[0]!(stale);
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    reads[1]!(withOther.map((m) => ({ ...m })));
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "a2"]));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1", "a2"]);
  });
});

describe("transcript reads that frames keep overtaking", () => {
  it("are made again at most five times; then the clear's hold ends and broadcasts count again", async () => {
    const { socket, chat, reads } = await openWithHeldReads();
    chat.clearHistory();
    for (let attempt = 1; attempt <= 5; attempt++) {
      await vi.waitFor(() => expect(reads).toHaveLength(1 + attempt));
      socket.push({ type: "cf_agent_chat_messages", messages: turn() });
      expect(chat.messages.value).toEqual([]);
      reads[attempt]!([]);
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reads).toHaveLength(6);
    socket.push({ type: "cf_agent_chat_messages", messages: turn() });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]));
  });

  it("the clear's hold ends when setMessages replaces the transcript while the overtaken read is out", async () => {
    const { socket, chat, reads } = await openWithHeldReads();
    chat.clearHistory();
    await vi.waitFor(() => expect(reads).toHaveLength(2));
    socket.push({ type: "cf_agent_chat_messages", messages: turn() });
    chat.setMessages([]);
    reads[1]!([]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    // No read of the replaced transcript is made again, and the cleared ids are no longer held back.
    expect(reads).toHaveLength(2);
    socket.push({ type: "cf_agent_chat_messages", messages: turn() });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]));
  });
});
