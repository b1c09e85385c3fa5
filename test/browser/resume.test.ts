import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const textParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((part) => part.type === "text");

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
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

/** Replays a stored stream on the resume path, as the server does after an ACK. */
function replay(socket: FakeSocket, id: string, chunks: Array<Record<string, unknown>>, complete = true) {
  chunks.forEach((chunk, seq) => socket.chunk(id, chunk, { replay: true, seq }));
  if (complete) socket.push({ type: "cf_agent_use_chat_response", id, body: "", done: false, replay: true, replayComplete: true });
}

describe("resume handshake", () => {
  it("answers a probe's offer with one ACK and renders the stream through the chat", async () => {
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    const probeId = probes(socket)[0]!.probeId;
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId });
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id: "r1" }]);
    replay(socket, "r1", textReply("a1", ["resumed ", "text"]).slice(0, 4));
    await vi.waitFor(() => expect(chat.status.value).toBe("streaming"));
    socket.chunk("r1", { type: "text-end", id: "t" }, { seq: 4 });
    socket.done("r1");
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(text(chat.messages.value[0])).toBe("resumed text");
  });

  it("ACKs duplicate offers for one request once per socket (#1733)", async () => {
    const { socket } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1" });
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    socket.push({ type: "cf_agent_stream_resuming", id: "r1" });
    expect(acks(socket)).toHaveLength(1);
  });

  it("renders the same buffer replayed twice only once (#1733)", async () => {
    const { socket, chat } = setup({ initialMessages: [{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] }] });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    const chunks = textReply("a1", ["once ", "only"]).slice(0, 4);
    replay(socket, "r1", chunks);
    replay(socket, "r1", chunks);
    socket.chunk("r1", { type: "text-end", id: "t" }, { seq: 4 });
    socket.done("r1");
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("once only"));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value).toHaveLength(2);
    expect(textParts(chat.messages.value[1])).toHaveLength(1);
    expect(text(chat.messages.value[1])).toBe("once only");
  });

  it("rebuilds a partly loaded assistant from the replay without a second text part", async () => {
    const { socket, chat } = setup({
      initialMessages: [
        { id: "u", role: "user", parts: [{ type: "text", text: "q" }] },
        { id: "a1", role: "assistant", parts: [{ type: "text", text: "part" }] }
      ]
    });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    replay(socket, "r1", textReply("a1", ["partial ", "then more"]).slice(0, 4));
    socket.chunk("r1", { type: "text-end", id: "t" }, { seq: 4 });
    socket.done("r1");
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("partial then more"));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((m) => m.id)).toEqual(["u", "a1"]);
    expect(textParts(chat.messages.value[1])).toHaveLength(1);
    expect(text(chat.messages.value[1])).toBe("partial then more");
  });

  it("keeps waiting after stream_pending, then completes on the offer that follows (#1784)", async () => {
    vi.useFakeTimers();
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_pending", id: "r1", probeId: probes(socket)[0]!.probeId });
    await vi.advanceTimersByTimeAsync(30_000);
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    expect(acks(socket)).toHaveLength(1);
    for (const chunk of textReply("a1", ["late start"])) socket.chunk("r1", chunk);
    socket.done("r1");
    await vi.waitFor(() => expect(text(chat.messages.value[0])).toBe("late start"));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
  });

  it("settles a pending probe when none follows", async () => {
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    const probeId = probes(socket)[0]!.probeId;
    socket.push({ type: "cf_agent_stream_pending", probeId });
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId });
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    // Settled: a later offer is observed (fallback), not attached to a stale probe.
    socket.push({ type: "cf_agent_stream_resuming", id: "r2" });
    expect(chat.isServerStreaming.value).toBe(true);
  });

  it("ignores a resume_none for another probe", async () => {
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: "someone-elses" });
    // Still waiting: an offer now attaches through the probe.
    socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
    expect(acks(socket)).toHaveLength(1);
    for (const chunk of textReply("a1", ["attached"])) socket.chunk("r1", chunk);
    socket.done("r1");
    await vi.waitFor(() => expect(text(chat.messages.value[0])).toBe("attached"));
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
  });

  it("gives up a probe nobody answers after 5 s", async () => {
    vi.useFakeTimers();
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    let settled = false;
    void chat.resumeStream().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(4_900);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    await vi.waitFor(() => expect(settled).toBe(true));
    expect(chat.status.value).toBe("ready");
    expect(chat.messages.value).toEqual([]);
  });

  it("serializes overlapping resumes: concurrent calls share one probe (#1837)", async () => {
    const { socket, chat } = setup({ resume: false });
    socket.open();
    const first = chat.resumeStream();
    const second = chat.resumeStream();
    expect(probes(socket)).toHaveLength(1);
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    await Promise.all([first, second]);
    expect(chat.status.value).toBe("ready");
  });
});

describe("reconnect", () => {
  it("re-probes after close → open from ready, but not on a bare first open", async () => {
    const { socket } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    await new Promise((resolve) => setTimeout(resolve, 10));
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
  });

  it("re-sends the same probe when the socket drops while it waits, starting no second resume", async () => {
    const { socket } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    expect(probes(socket)[1]!.probeId).toBe(probes(socket)[0]!.probeId);
  });

  it("re-probes from error after the socket dropped mid-stream, and the continuation replay skips applied chunks (#1951)", async () => {
    const { socket, chat } = setup({ resume: true });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    const sent = chat.sendMessage({ text: "q" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const id = String(socket.sentOf("cf_agent_use_chat_request")[0]!.id);
    const chunks = textReply("a1", ["one ", "two ", "three"]);
    chunks.slice(0, 4).forEach((chunk, seq) => socket.chunk(id, chunk, { seq }));
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one two "));
    socket.drop();
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    expect(chat.error.value?.message).toBe("WebSocket closed mid-stream");
    await sent;
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id, probeId: probes(socket)[1]!.probeId });
    // A non-continuation replay rebuilds from chunk 0.
    replay(socket, id, chunks.slice(0, 4));
    chunks.slice(4).forEach((chunk, index) => socket.chunk(id, chunk, { seq: 4 + index }));
    socket.done(id);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value).toHaveLength(2);
    expect(textParts(chat.messages.value[1])).toHaveLength(1);
    expect(text(chat.messages.value[1])).toBe("one two three");
  });

  it("with resume: false sends one idle probe after a reconnect only when a turn was unfinished", async () => {
    const { socket, chat } = setup({ resume: false });
    socket.open();
    socket.drop();
    socket.open();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(probes(socket)).toHaveLength(0);
    const sent = chat.sendMessage({ text: "q" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const id = String(socket.sentOf("cf_agent_use_chat_request")[0]!.id);
    socket.chunk(id, { type: "start", messageId: "a1" });
    socket.drop();
    await sent;
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    expect(String(probes(socket)[0]!.probeId)).toHaveLength(21);
  });
});

describe("recovery flag", () => {
  it("isRecovering follows cf_agent_chat_recovering and clears when the next stream starts", async () => {
    const { socket, chat } = setup({ resume: true });
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    socket.push({ type: "cf_agent_chat_recovering", recovering: true });
    expect(chat.isRecovering.value).toBe(true);
    socket.push({ type: "cf_agent_stream_resuming", id: "recovered" });
    expect(chat.isRecovering.value).toBe(false);
    socket.push({ type: "cf_agent_chat_recovering", recovering: true });
    socket.push({ type: "cf_agent_chat_recovering", recovering: false });
    expect(chat.isRecovering.value).toBe(false);
  });
});

describe("flags never stick", () => {
  it("connectionError is set after a failed attempt and cleared when a socket opens", async () => {
    const { socket, chat } = setup();
    socket.drop(1006);
    await vi.waitFor(() => expect(chat.connectionError.value).not.toBeNull());
    expect(chat.connectionError.value!.message).toContain("Could not connect");
    expect(chat.connectionStatus.value).toBe("connecting");
    socket.open();
    expect(chat.connectionError.value).toBeNull();
    expect(chat.connectionStatus.value).toBe("open");
  });

  it("stop() during an observed server turn sends one cancel for its id; its aborted end clears isServerStreaming", async () => {
    const { socket, chat } = setup();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    socket.push({ type: "cf_agent_stream_resuming", id: "server-turn" });
    socket.chunk("server-turn", { type: "start", messageId: "s1" });
    socket.chunk("server-turn", { type: "text-delta", id: "t", delta: "scheduled" });
    expect(chat.isServerStreaming.value).toBe(true);
    await chat.stop();
    expect(socket.sentOf("cf_agent_chat_request_cancel")).toEqual([{ id: "server-turn", type: "cf_agent_chat_request_cancel" }]);
    socket.done("server-turn", { outcome: "aborted" });
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.isStreaming.value).toBe(false);
    expect(text(chat.messages.value[0])).toBe("scheduled");
  });

  it("an error frame on an observed turn ends it without rendering the error text", async () => {
    const { socket, chat } = setup();
    socket.open();
    socket.chunk("x", { type: "start", messageId: "s1" });
    socket.chunk("x", { type: "text-delta", id: "t", delta: "partial" });
    socket.push({ type: "cf_agent_use_chat_response", id: "x", body: "model exploded", done: false, error: true });
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.messages.value.map((m) => text(m)).join("")).not.toContain("exploded");
  });
});
