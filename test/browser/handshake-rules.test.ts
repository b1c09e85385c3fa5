/**
 * Frame orderings a real server produces only with a proxy in between or at
 * a precise moment (issues 21 and 22): an unanswered resume probe, a
 * reconnect probe that finds nothing while `status` is `error`, a transcript
 * frame that renames the message an approval continuation streams into, and a
 * transcript frame that omits the history reply while an announced stream has
 * carried nothing yet.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { PROBE_GRACE_MS } from "../../src/core/model";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

type Part = UIMessage["parts"][number];

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function setup(options: Partial<Parameters<typeof useAgentChat>[0]> = {}) {
  const socket = new FakeSocket();
  const mounted = mountComposable(() => useAgentChat({ agent: socket, initialMessages: [], throttle: false, ...options }));
  cleanup.push(mounted.unmount);
  return { socket, chat: mounted.result };
}

const probes = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_request");
const requests = (socket: FakeSocket) => socket.sentOf("cf_agent_use_chat_request");
const acks = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_ack");
const ids = (messages: readonly UIMessage[]) => messages.map((message) => message.id);
const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const user = (id: string, body = id): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: body }] });
const tool = (name: string, toolCallId: string, state: string, extra: Record<string, unknown> = {}) =>
  ({ type: `tool-${name}`, toolCallId, state, input: { q: toolCallId }, ...extra }) as unknown as Part;
const assistant = (id: string, ...parts: Part[]): UIMessage => ({ id, role: "assistant", parts: [{ type: "step-start" }, ...parts] });

async function openIdle(socket: FakeSocket) {
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
  socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
}

/** Sends a message and starts its reply (`a1`); returns the request id. */
async function sendAndStart(socket: FakeSocket, chat: ReturnType<typeof setup>["chat"]): Promise<string> {
  void chat.sendMessage({ text: "q" });
  await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
  const id = String(requests(socket)[0]!.id);
  socket.chunk(id, { type: "start", messageId: "a1" });
  return id;
}

/**
 * Sends "story", lets `reply` stream the start of its reply, drops the socket (queuing `queue` while it
 * is down), reopens it and waits for the re-probe; returns the story's request id.
 */
async function storyCutOff(socket: FakeSocket, chat: ReturnType<typeof setup>["chat"], reply: (story: string) => Promise<void> | void, queue?: string): Promise<string> {
  await openIdle(socket);
  void chat.sendMessage({ text: "story" });
  await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
  const story = String(requests(socket)[0]!.id);
  await reply(story);
  socket.drop();
  if (queue !== undefined) {
    void chat.sendMessage({ text: queue });
    await vi.waitFor(() => {
      if (chat.queuedMessages.value.length !== 1) throw new Error(`"${queue}" is not queued`);
    });
  }
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
  return story;
}

/** Answers a request with a short text reply. */
function answer(socket: FakeSocket, id: string, messageId: string, words: string[]) {
  for (const chunk of textReply(messageId, words)) socket.chunk(id, chunk);
  socket.done(id, { outcome: "completed" });
}

describe("a pending resume probe holds sends only for its grace (issue 21, 4)", () => {
  it("the first send goes out when the grace ends while the mount probe is unanswered, and streams", async () => {
    const { socket, chat } = setup();
    socket.open();
    const opened = Date.now();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    void chat.sendMessage({ text: "right away" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1), { timeout: PROBE_GRACE_MS + 1_000 });
    expect(Date.now() - opened).toBeGreaterThanOrEqual(PROBE_GRACE_MS - 50);
    expect(chat.queuedMessages.value).toEqual([]);
    answer(socket, String(requests(socket)[0]!.id), "a1", ["at ", "once"]);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map(text)).toEqual(["right away", "at once"]);
    // The probe's late answer changes nothing.
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.messages.value.map(text)).toEqual(["right away", "at once"]);
    expect(chat.status.value).toBe("ready");
  });

  it("a send after a reconnect goes out when the grace ends while the re-probe is unanswered", async () => {
    const { socket, chat } = setup();
    await openIdle(socket);
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    void chat.sendMessage({ text: "after the drop" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1), { timeout: PROBE_GRACE_MS + 1_000 });
    answer(socket, String(requests(socket)[0]!.id), "a1", ["fine"]);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map(text)).toEqual(["after the drop", "fine"]);
  });
});

describe("Rule (a probe's grace): a send waits for the probe's answer (chaos: server down with a queued send)", () => {
  // AIChatAgent parks a socket it offers a stream on connect: no stream reaches it until it ACKs.
  // A request sent before the offer arrives loses its reply's first chunks, `start` among them.
  it("a send queued while the agent was down goes out after the re-probe's answer, so the offer made on connect is ACKed first", async () => {
    const { socket, chat } = setup();
    const story = await storyCutOff(socket, chat, (id) => socket.chunk(id, { type: "start", messageId: "a1" }), "still there?");
    // The restarted agent offers the interrupted stream from onConnect, then answers the probe.
    // The offer takes a round trip to arrive; a send that does not wait for it has gone out by then.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests(socket)).toHaveLength(1);
    socket.push({ type: "cf_agent_stream_resuming", id: story });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(requests(socket)).toHaveLength(1);
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(acks(socket).map((ack) => ack.id)).toContain(story));
    // The agent had ended the interrupted stream: its answer to the ACK is the end.
    socket.done(story, { replay: true, outcome: "aborted" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(2));
    const sent = socket.sent.map((frame) => frame.type);
    expect(sent.lastIndexOf("cf_agent_stream_resume_ack")).toBeGreaterThan(-1);
    expect(sent.lastIndexOf("cf_agent_stream_resume_ack")).toBeLessThan(sent.lastIndexOf("cf_agent_use_chat_request"));
    answer(socket, String(requests(socket)[1]!.id), "a2", ["yes"]);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.at(-1)?.id).toBe("a2");
    expect(text(chat.messages.value.at(-1))).toBe("yes");
  });
});

describe("Rule (an ACK the server ignored): an offer of another request lets go of a resume that got nothing (chaos: server down, queued send)", () => {
  // Chaos seed 674831478: the restarted agent offered the interrupted request on connect, then began
  // its recovery under a new id; the ACK for the first offer came after that, and AIChatAgent ignores
  // an ACK for a stream it no longer runs. The resume waited for it, with status `submitted`, and the
  // message queued while the agent was down never went out.
  it("the queued send goes out once the recovery ends, and the chat ends ready with every message", async () => {
    const { socket, chat } = setup();
    const story = await storyCutOff(
      socket,
      chat,
      async (id) => {
        for (const [seq, chunk] of [{ type: "start", messageId: "a1" }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "w0 " }].entries()) {
          socket.chunk(id, chunk, { seq });
        }
        await vi.waitFor(() => expect(text(chat.messages.value.at(-1))).toBe("w0 "));
      },
      "still there?"
    );
    socket.push({ type: "cf_agent_stream_resuming", id: story });
    await vi.waitFor(() => expect(acks(socket).map((ack) => ack.id)).toContain(story));
    // The ACK reached the agent after the recovery began: nothing of `story` comes any more.
    socket.push({ type: "cf_agent_stream_resuming", id: "recovery", probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(acks(socket).map((ack) => ack.id)).toContain("recovery"));
    const continued = { continuation: true };
    socket.chunk("recovery", { type: "start" }, { replay: true, seq: 0, ...continued });
    socket.chunk("recovery", { type: "text-delta", id: "t", delta: "w1 " }, { replay: true, seq: 1, ...continued });
    socket.push({ type: "cf_agent_use_chat_response", id: "recovery", body: "", done: false, replay: true, replayComplete: true, ...continued });
    socket.chunk("recovery", { type: "text-delta", id: "t", delta: "w2" }, { seq: 2, ...continued });
    socket.chunk("recovery", { type: "text-end", id: "t" }, { seq: 3, ...continued });
    socket.chunk("recovery", { type: "finish" }, { seq: 4, ...continued });
    expect(requests(socket)).toHaveLength(1);
    const question = chat.messages.value[0]!.id;
    socket.push({ type: "cf_agent_chat_messages", messages: [user(question, "story"), assistant("a1", { type: "text", text: "w0 w1 w2" } as Part)] });
    socket.done("recovery", { ...continued, messageIds: [question] });
    socket.push({ type: "cf_agent_chat_recovering", recovering: false, id: story });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(2));
    expect(chat.queuedMessages.value).toEqual([]);
    answer(socket, String(requests(socket)[1]!.id), "a2", ["yes"]);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map(text)).toEqual(["story", "w0 w1 w2", "still there?", "yes"]);
    expect(ids(chat.messages.value).slice(1)).toEqual(["a1", ids(chat.messages.value)[2], "a2"]);
  });
  it("another request's live frames let the resume go too, and its turn shows as observed", async () => {
    const { socket, chat } = setup();
    const story = await storyCutOff(socket, chat, async (id) => {
      socket.chunk(id, { type: "start", messageId: "a1" }, { seq: 0 });
      await vi.waitFor(() => expect(ids(chat.messages.value)).toContain("a1"));
    });
    // Offered on connect and again as the probe's answer; the turn ends before the ACK arrives, and another tab's turn starts.
    socket.push({ type: "cf_agent_stream_resuming", id: story });
    await vi.waitFor(() => expect(acks(socket).map((ack) => ack.id)).toContain(story));
    socket.push({ type: "cf_agent_stream_resuming", id: story, probeId: probes(socket)[1]!.probeId });
    const question = chat.messages.value[0]!.id;
    socket.push({ type: "cf_agent_chat_messages", messages: [user(question, "story"), assistant("a1", { type: "text", text: "told" } as Part), user("u2", "other tab")] });
    for (const chunk of textReply("b1", ["from ", "there"])) socket.chunk("other", chunk);
    await vi.waitFor(() => expect(text(chat.messages.value.at(-1))).toBe("from there"));
    socket.done("other", { outcome: "completed" });
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.isServerStreaming.value).toBe(false);
    void chat.sendMessage({ text: "next" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(2));
  });
});

describe("an observed turn another request supersedes ends (demo check: the agent goes down mid-reply)", () => {
  it("a recovery offered on a reconnect whose probe a send settled ends when this client's request streams: nothing stays streaming, and the stored transcript is read", async () => {
    let reads = 0;
    const stored = [user("u1", "/story"), assistant("story", { type: "text", text: "Once upon a time, longer" } as Part)];
    const { socket, chat } = setup({
      initialMessages: undefined,
      getInitialMessages: async () => {
        reads++;
        return stored;
      }
    });
    await openIdle(socket);
    await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    // A send while the re-probe is out settles it; the server offers its recovering turn from onConnect.
    void chat.sendMessage({ text: "Are you still there?" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1), { timeout: PROBE_GRACE_MS + 1_000 });
    socket.push({ type: "cf_agent_stream_resuming", id: "recovery" });
    await vi.waitFor(() => expect(acks(socket).map((ack) => ack.id)).toContain("recovery"));
    expect(chat.isServerStreaming.value).toBe(true);
    // The re-probe's late answer says nothing runs: the recovery never streams (this client's request superseded it).
    const readsBefore = reads;
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    answer(socket, String(requests(socket)[0]!.id), "a2", ["yes"]);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    await vi.waitFor(() => expect(chat.isStreaming.value).toBe(false));
    expect(chat.isServerStreaming.value).toBe(false);
    // What the recovery stored unseen is read back.
    await vi.waitFor(() => expect(reads).toBeGreaterThan(readsBefore));
  });
});

describe("a reconnect that finds nothing keeps the error (issue 21, 5)", () => {
  it("status error, a reconnect, its probe answered idle: status and error stay until cleared", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const { socket, chat } = setup();
    await openIdle(socket);
    const id = await sendAndStart(socket, chat);
    socket.push({ type: "cf_agent_use_chat_response", id, body: "model exploded", done: true, error: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(chat.status.value).toBe("error");
    expect(chat.error.value?.message).toBe("model exploded");
    chat.clearError();
    expect(chat.status.value).toBe("ready");
    expect(chat.error.value).toBeUndefined();
  });

  it("a probe that does find a stream still replaces the error with that stream's status", async () => {
    const { socket, chat } = setup();
    await openIdle(socket);
    const id = await sendAndStart(socket, chat);
    socket.drop();
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id, probeId: probes(socket)[1]!.probeId });
    for (const [seq, chunk] of textReply("a1", ["back"]).entries()) socket.chunk(id, chunk, { replay: seq < 1, seq });
    socket.done(id);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.error.value).toBeUndefined();
    expect(text(chat.messages.value[1])).toBe("back");
  });
});

describe("a continuation's reply takes the server's id as soon as a frame renames it (issue 21, 6)", () => {
  /** How the continuation reaches the client: through its launch probe, or announced before the launch probed. */
  const announcements: Array<[path: string, announce: (socket: FakeSocket) => Promise<void>]> = [
    [
      "announced before the probe (observed)",
      async (socket) => {
        socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
        socket.push({ type: "cf_agent_use_chat_response", id: "k1", body: "", done: false, replay: true, replayComplete: true, continuation: true });
      }
    ],
    [
      "attached through the probe",
      async (socket) => {
        await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
        socket.push({ type: "cf_agent_stream_resuming", id: "k1", probeId: probes(socket)[1]!.probeId });
      }
    ]
  ];
  for (const [path, announce] of announcements) {
    it(`after an approval, a transcript frame mid-continuation renames the message; every later write keeps the server's id (${path})`, async () => {
      const approved = () => [
        user("u1", "do it"),
        assistant("a1", tool("dangerousAction", "c1", "approval-requested", { approval: { id: "ap1" } }))
      ];
      const { socket, chat } = setup({ initialMessages: approved() });
      await openIdle(socket);
      await chat.addToolApprovalResponse({ id: "ap1", approved: true });
      await announce(socket);
      const chunk = (body: Record<string, unknown>, seq: number) => socket.chunk("k1", body, { continuation: true, seq });
      chunk({ type: "start" }, 0);
      chunk({ type: "start-step" }, 1);
      chunk({ type: "text-start", id: "t" }, 2);
      chunk({ type: "text-delta", id: "t", delta: "one " }, 3);
      await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one "));
      expect(ids(chat.messages.value)).toEqual(["u1", "a1"]);
      socket.push({
        type: "cf_agent_chat_messages",
        messages: [
          user("u1", "do it"),
          assistant("server-a1", tool("dangerousAction", "c1", "approval-responded", { approval: { id: "ap1", approved: true } }))
        ]
      });
      const seen: string[][] = [];
      for (const [seq, delta] of [[4, "two "], [5, "three"]] as const) {
        chunk({ type: "text-delta", id: "t", delta }, seq);
        await vi.waitFor(() => expect(text(chat.messages.value[1]).endsWith(delta)).toBe(true));
        seen.push(ids(chat.messages.value));
      }
      chunk({ type: "text-end", id: "t" }, 6);
      chunk({ type: "finish" }, 7);
      socket.done("k1", { continuation: true });
      await vi.waitFor(() => expect(chat.isStreaming.value).toBe(false));
      await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
      seen.push(ids(chat.messages.value));
      expect(seen).toEqual([
        ["u1", "server-a1"],
        ["u1", "server-a1"],
        ["u1", "server-a1"]
      ]);
      expect(text(chat.messages.value[1])).toBe("one two three");
    });
  }
});

describe("a transcript frame is newer than the history read, even while an announced stream is silent (issue 22, 4)", () => {
  it("a frame that omits the last history reply removes it while an ACKed stream has carried nothing; the stream then brings its own message", async () => {
    const { socket, chat } = setup({ initialMessages: [user("u1", "q"), assistant("a0", { type: "text", text: "old" } as Part)] });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    expect(acks(socket)).toHaveLength(1);
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1", "q")] });
    expect(ids(chat.messages.value)).toEqual(["u1"]);
    for (const [seq, chunk] of textReply("a1", ["new ", "reply"]).entries()) socket.chunk("r1", chunk, { seq });
    socket.done("r1");
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("new reply"));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(ids(chat.messages.value)).toEqual(["u1", "a1"]);
  });
});

const waitingForAnswer = () => [user("u1", "ask me"), assistant("a1", tool("askUser", "c1", "input-available"))];
const cancels = (socket: FakeSocket) => socket.sentOf("cf_agent_chat_request_cancel");

describe("a stop lands on the continuation whenever the probe's answer arrives (issue 22, 3)", () => {

  for (const pendingFirst of [false, true]) {
    it(`stop() after the continuation probe, its answer ${pendingFirst ? "(pending, then the offer)" : "(the offer)"} arriving after the stop: one cancel, no ACK, no second assistant message`, async () => {
      const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
      await openIdle(socket);
      chat.addToolOutput({ toolCallId: "c1", output: "yes" });
      await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
      const launchProbe = probes(socket)[1]!.probeId;
      await chat.stop();
      expect(chat.isToolContinuation.value).toBe(false);
      // The answers to the launch probe were already on the wire.
      if (pendingFirst) socket.push({ type: "cf_agent_stream_pending", probeId: launchProbe });
      socket.push({ type: "cf_agent_stream_resuming", id: "k1", probeId: launchProbe });
      for (const probe of probes(socket).slice(2)) socket.push({ type: "cf_agent_stream_resuming", id: "k1", probeId: probe.probeId });
      // The server broadcasts the continuation's chunks until it takes the cancel.
      socket.chunk("k1", { type: "start" }, { continuation: true, seq: 0 });
      socket.chunk("k1", { type: "text-start", id: "t" }, { continuation: true, seq: 1 });
      socket.chunk("k1", { type: "text-delta", id: "t", delta: "late" }, { continuation: true, seq: 2 });
      socket.done("k1", { continuation: true, outcome: "aborted" });
      await vi.waitFor(() => expect(cancels(socket)).toEqual([{ type: "cf_agent_chat_request_cancel", id: "k1" }]));
      expect(acks(socket)).toEqual([]);
      await vi.waitFor(() => expect(chat.isStreaming.value).toBe(false));
      expect(chat.status.value).toBe("ready");
      expect(ids(chat.messages.value)).toEqual(["u1", "a1"]);
      expect(chat.messages.value.filter((message) => message.role === "assistant")).toHaveLength(1);
    });
  }
});
