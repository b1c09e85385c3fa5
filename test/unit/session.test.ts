import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChatOptions } from "../../src/core/chat";
import type { ChatSession } from "../../src/core/session";
import { nodeSession } from "../support/node-session";
import { type FakeSocket, textReply } from "../support/fake-socket";

/**
 * The session that ships, in Node, at its I/O boundary: the real `AbstractChat`,
 * the session's own transport and the publishing state, over a scripted
 * socket and a transcript reader the test answers.
 */

const sessions: Array<ChatSession<UIMessage>> = [];
afterEach(() => {
  for (const session of sessions.splice(0)) session.dispose();
});

function start(stored: () => UIMessage[] = () => [], settings: ChatOptions<UIMessage> = {}) {
  const started = nodeSession(stored, settings);
  sessions.push(started.session);
  return started;
}

const probes = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_request");
const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");

/** Opens the socket and answers the first probe: nothing runs. Resolves once the first transcript is in. */
async function openIdle(socket: FakeSocket, session: ChatSession<UIMessage>) {
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
  socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
  await session.ready;
}

/** Sends "q" as the first request; resolves with its promise and its request id. */
async function sendFirst(socket: FakeSocket, session: ChatSession<UIMessage>) {
  const sent = session.sendMessage({ text: "q" });
  await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
  return { sent, id: String(socket.sentOf("cf_agent_use_chat_request")[0]!.id) };
}

describe("the shipped session at its I/O boundary", () => {
  it("a reply the socket cut, which the server finished while this client reconnected, ends ready, not 'WebSocket closed mid-stream' (issue 28)", async () => {
    const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "q" }] };
    const answer: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "one two three" }] };
    let stored: UIMessage[] = [];
    const { socket, out, session } = start(() => stored);
    await openIdle(socket, session);
    const { sent, id } = await sendFirst(socket, session);
    const chunks = textReply("a1", ["one ", "two ", "three"]);
    chunks.slice(0, 4).forEach((chunk, seq) => socket.chunk(id, chunk, { seq }));
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("one two "));
    socket.drop();
    await vi.waitFor(() => expect(out.status.value).toBe("error"));
    expect(out.error.value?.message).toBe("WebSocket closed mid-stream");
    await sent;
    // The server finished the turn while this client was away: the probe finds nothing, the transcript has the reply.
    stored = [{ ...question, id: (out.messages.value[0] as UIMessage).id }, answer];
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    socket.push({ type: "cf_agent_chat_messages", messages: stored });
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("one two three"));
    await vi.waitFor(() => expect(out.status.value).toBe("ready"));
    expect(out.error.value).toBeUndefined();
    expect(out.messages.value.map((message) => message.id)).toEqual(stored.map((message) => message.id));
  });

  it("Rule (a cut turn found idle is read back): a cut reply a restarted server stored shorter than shown, after the reopen's read was answered, shows as stored (chaos: server restart)", async () => {
    const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "q" }] };
    let stored: UIMessage[] = [];
    const { socket, out, session } = start(() => stored);
    await openIdle(socket, session);
    const { sent, id } = await sendFirst(socket, session);
    textReply("a1", ["one ", "two ", "three"]).slice(0, 4).forEach((chunk, seq) => socket.chunk(id, chunk, { seq }));
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("one two "));
    socket.drop();
    await sent;
    const asked = { id: (out.messages.value[0] as UIMessage).id };
    // The reopen's read is answered while the restarted server has not yet stored the partial reply ...
    stored = [{ ...question, ...asked }];
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 0));
    // ... which it then stores with the words it had kept: fewer than this client saw.
    stored = [{ ...question, ...asked }, { id: "a1", role: "assistant", parts: [{ type: "text", text: "one " }] }];
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("one "));
    await vi.waitFor(() => expect(out.status.value).toBe("ready"));
    expect(out.messages.value.map((message) => message.id)).toEqual(stored.map((message) => message.id));
  });

  it("Rule (a continuation is observed as one): a restarted server's recovery continuation, offered to the reconnect's probe, extends the cut reply (chaos: server restart)", async () => {
    // The frames a restarted `AIChatAgent` sent in a failing chaos trial: the cut request offered on connect, then its recovery
    // under a new id offered to the probe, whose first live chunk came before its replay.
    const { socket, out, session } = start();
    await openIdle(socket, session);
    void session.sendMessage({ text: "q" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const cut = String(socket.sentOf("cf_agent_use_chat_request")[0]!.id);
    const words = Array.from({ length: 12 }, (_, i) => `w${i} `);
    [{ type: "start", messageId: "a1" }, { type: "start-step" }, { type: "text-start", id: "t" }, ...words.slice(0, 6).map((delta) => ({ type: "text-delta", id: "t", delta }))].forEach((chunk, seq) =>
      socket.chunk(cut, chunk, { seq })
    );
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe(words.slice(0, 6).join("")));
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resuming", id: cut });
    const recovery = "recovery-1";
    socket.push({ type: "cf_agent_stream_resuming", id: recovery, probeId: probes(socket)[1]!.probeId });
    const continuation = { continuation: true };
    socket.chunk(recovery, { type: "text-delta", id: "t", delta: words[6] }, { seq: 3, ...continuation });
    socket.chunk(recovery, { type: "start" }, { seq: 0, replay: true, ...continuation });
    socket.chunk(recovery, { type: "start-step" }, { seq: 1, replay: true, ...continuation });
    socket.chunk(recovery, { type: "text-delta", id: "t", delta: words[6] }, { seq: 3, replay: true, ...continuation });
    socket.push({ type: "cf_agent_use_chat_response", id: recovery, body: "", done: false, replay: true, replayComplete: true, ...continuation });
    words.slice(7).forEach((delta, i) => socket.chunk(recovery, { type: "text-delta", id: "t", delta }, { seq: 4 + i, ...continuation }));
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe(words.join("")));
    expect(out.messages.value.map((message) => message.id)).toEqual([out.messages.value[0]!.id, "a1"]);
  });

  it("a turn the server failed, then a reconnect whose probe finds nothing: the server's error stays until cleared (issue 21, 5)", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const { socket, out, session } = start();
    await openIdle(socket, session);
    void session.sendMessage({ text: "q" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const id = String(socket.sentOf("cf_agent_use_chat_request")[0]!.id);
    socket.chunk(id, { type: "start", messageId: "a1" });
    socket.push({ type: "cf_agent_use_chat_response", id, body: "model exploded", done: true, error: true });
    await vi.waitFor(() => expect(out.status.value).toBe("error"));
    socket.drop();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(session.chat.status).toBe("error"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(out.status.value).toBe("error");
    expect(out.error.value?.message).toBe("model exploded");
  });

  it("with resume: false, a cut reply the server finished ends ready once the reconnect's probe finds nothing running", async () => {
    const question: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "q" }] };
    const answer: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "one two three" }] };
    let stored: UIMessage[] = [];
    const { socket, out, session } = start(() => stored, { resume: false });
    socket.open();
    await session.ready;
    const { sent, id } = await sendFirst(socket, session);
    textReply("a1", ["one ", "two ", "three"]).slice(0, 4).forEach((chunk, seq) => socket.chunk(id, chunk, { seq }));
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("one two "));
    socket.drop();
    await vi.waitFor(() => expect(out.status.value).toBe("error"));
    await sent;
    stored = [{ ...question, id: (out.messages.value[0] as UIMessage).id }, answer];
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
    await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("one two three"));
    await vi.waitFor(() => expect(out.status.value).toBe("ready"));
    expect(out.error.value).toBeUndefined();
  });
});

/** Every `JSON.parse` of a text while `run` runs, by our own code (src/) or by anything else (the libraries), by the text parsed. */
async function parses(run: () => Promise<void>): Promise<{ ours: Map<string, number>; others: Map<string, number> }> {
  const ours = new Map<string, number>();
  const others = new Map<string, number>();
  const parse = JSON.parse;
  const spy = vi.spyOn(JSON, "parse").mockImplementation(function (this: unknown, text: string, reviver?: Parameters<typeof JSON.parse>[1]) {
    // The caller: the first frame outside this file and the spy's library.
    const caller = (new Error().stack ?? "").split("\n").slice(1).find((line) => !line.includes("session.test.ts") && !/node_modules[\\/](@vitest|tinyspy|vitest)/.test(line)) ?? "";
    const counts = /[\\/]src[\\/]/.test(caller) ? ours : others;
    counts.set(text, (counts.get(text) ?? 0) + 1);
    return parse.call(this, text, reviver);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return { ours, others };
}

/**
 * Rule (one parse per frame): what a list of frames cost in `JSON.parse`: each frame's text parsed once, each
 * chunk body at most once, a plain delta's body never, and no frame or body parsed anywhere else (the AI SDK
 * gets parsed chunks).
 */
function expectParsedOnce(counted: { ours: Map<string, number>; others: Map<string, number> }, frames: string[], deltas: string[]) {
  expect(frames.map((frame) => counted.ours.get(frame))).toEqual(frames.map(() => 1));
  const bodies = frames.map((frame) => String(JSON.parse(frame).body ?? "")).filter((body) => body !== "");
  expect(bodies.filter((body) => (counted.ours.get(body) ?? 0) > 1)).toEqual([]);
  expect(deltas.filter((body) => counted.ours.has(body))).toEqual([]);
  expect([...frames, ...bodies].filter((text) => counted.others.has(text))).toEqual([]);
}

describe("Rule (one parse per frame)", () => {
  it("own turn: each frame of this client's reply is parsed once, by the client only, and its text deltas' bodies never", async () => {
    const { socket, out, session } = start();
    await openIdle(socket, session);
    const { id } = await sendFirst(socket, session);
    const chunks = textReply("a1", Array.from({ length: 20 }, (_, n) => `w${n} `));
    const frames = chunks.map((chunk, seq) => JSON.stringify({ type: "cf_agent_use_chat_response", id, body: JSON.stringify(chunk), done: false, seq }));
    frames.push(JSON.stringify({ type: "cf_agent_use_chat_response", id, body: "", done: true }));
    const counted = await parses(async () => {
      for (const frame of frames) socket.push(frame);
      await vi.waitFor(() => expect(out.status.value).toBe("ready"));
    });
    expect(text(out.messages.value[1])).toBe(Array.from({ length: 20 }, (_, n) => `w${n} `).join(""));
    const deltas = chunks.filter((chunk) => chunk.type === "text-delta").map((chunk) => JSON.stringify(chunk));
    expectParsedOnce(counted, frames, deltas);
  });

  it("observed turn: each frame of a reply another client started is parsed once, and its body once: the observed overlay builds from it", async () => {
    const { socket, out, session } = start();
    await openIdle(socket, session);
    socket.push({ type: "cf_agent_chat_messages", messages: [{ id: "u9", role: "user", parts: [{ type: "text", text: "elsewhere" }] }] });
    await vi.waitFor(() => expect(out.messages.value).toHaveLength(1));
    const chunks = textReply("a9", ["x ", "y ", "z"]);
    const frames = chunks.map((chunk) => JSON.stringify({ type: "cf_agent_use_chat_response", id: "other", body: JSON.stringify(chunk), done: false }));
    const counted = await parses(async () => {
      for (const frame of frames) socket.push(frame);
      await vi.waitFor(() => expect(text(out.messages.value[1])).toBe("x y z"));
    });
    expectParsedOnce(counted, frames, []);
    expect(chunks.map((chunk) => counted.ours.get(JSON.stringify(chunk)))).toEqual(chunks.map(() => 1));
  });

  it("replay: each frame of a resumed stream, replayed and live, is parsed once, by the client only, and its deltas' bodies never", async () => {
    const { socket, out } = start();
    socket.open();
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
    const words = Array.from({ length: 40 }, (_, n) => `w${n} `);
    const chunks = textReply("a1", words);
    const frames = [
      // The server's buffer of the running turn (start, text-start, 20 deltas), then its live rest.
      ...chunks.slice(0, 22).map((chunk, seq) => JSON.stringify({ type: "cf_agent_use_chat_response", id: "r1", body: JSON.stringify(chunk), done: false, replay: true, seq })),
      JSON.stringify({ type: "cf_agent_use_chat_response", id: "r1", body: "", done: false, replay: true, replayComplete: true }),
      ...chunks.slice(22).map((chunk, n) => JSON.stringify({ type: "cf_agent_use_chat_response", id: "r1", body: JSON.stringify(chunk), done: false, seq: 22 + n })),
      JSON.stringify({ type: "cf_agent_use_chat_response", id: "r1", body: "", done: true })
    ];
    const counted = await parses(async () => {
      socket.push({ type: "cf_agent_stream_resuming", id: "r1", probeId: probes(socket)[0]!.probeId });
      await vi.waitFor(() => expect(socket.sentOf("cf_agent_stream_resume_ack")).toHaveLength(1));
      for (const frame of frames) socket.push(frame);
      await vi.waitFor(() => expect(text(out.messages.value[0])).toBe(words.join("")));
    });
    expect(out.messages.value.map((message) => message.id)).toEqual(["a1"]);
    const deltas = chunks.filter((chunk) => chunk.type === "text-delta").map((chunk) => JSON.stringify(chunk));
    expectParsedOnce(counted, frames, deltas);
  });
});

describe("Rule (a failed read is made again)", () => {
  it("a read-back that got no answer is made again, at once when the socket opens again, and is never taken for an empty transcript", async () => {
    const stored: UIMessage[] = [{ id: "u1", role: "user", parts: [{ type: "text", text: "kept" }] }];
    let reads = 0;
    let failing = true;
    // Without resyncOnReconnect the reopen reads nothing of its own: the second read is the failed one made again.
    const started = nodeSession(() => stored, { resyncOnReconnect: false }, {
      readStored: async () => {
        reads++;
        if (failing) throw new Error("the agent did not answer (Failed to fetch)");
        return stored;
      }
    });
    sessions.push(started.session);
    const { socket, out, session } = started;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      await openIdle(socket, session);
      expect(out.messages.value.map((message) => message.id)).toEqual(["u1"]);
      session.clearHistory();
      await vi.waitFor(() => expect(reads).toBe(1));
      // Another tab's message reached this client before its clear reached the server, which then dropped it.
      socket.push({ type: "cf_agent_chat_messages", messages: [{ id: "o1", role: "user", parts: [{ type: "text", text: "other" }] }] });
      await vi.waitFor(() => expect(out.messages.value.map((message) => message.id)).toEqual(["o1"]));
      failing = false;
      stored.length = 0;
      socket.drop();
      socket.open();
      await vi.waitFor(() => expect(reads).toBe(2));
      await vi.waitFor(() => expect(out.messages.value).toEqual([]));
    } finally {
      warn.mockRestore();
    }
  });

  it("a reconnect's own read takes the place of a failed read waiting for its pause: the socket opening again makes one read, not two", async () => {
    const stored: UIMessage[] = [{ id: "u1", role: "user", parts: [{ type: "text", text: "kept" }] }];
    let reads = 0;
    let answered = 0;
    let failing = true;
    // resyncOnReconnect is on (the default): the reopen reads the transcript of its own.
    const started = nodeSession(() => stored, {}, {
      readStored: async () => {
        reads++;
        if (failing) throw new Error("the agent did not answer (Failed to fetch)");
        answered++;
        return stored;
      }
    });
    sessions.push(started.session);
    const { socket, out, session } = started;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      await openIdle(socket, session);
      session.clearHistory();
      await vi.waitFor(() => expect(reads).toBe(1));
      await vi.waitFor(() => expect(warn.mock.calls.some((call) => String(call[0]).includes("Could not read the transcript"))).toBe(true));
      failing = false;
      stored.length = 0;
      socket.drop();
      // The open handler makes its reads as the socket opens.
      socket.open();
      expect(reads).toBe(2);
      await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
      socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
      await vi.waitFor(() => expect(answered).toBe(1));
      await vi.waitFor(() => expect(out.messages.value).toEqual([]));
      expect(reads).toBe(2);
    } finally {
      warn.mockRestore();
    }
  });

  it("a read that keeps failing warns once for the run of failures, not at every retry", async () => {
    let reads = 0;
    let failing = true;
    const started = nodeSession(() => [], { resyncOnReconnect: false }, {
      readStored: async () => {
        reads++;
        if (failing) throw new Error("Failed to fetch");
        return [];
      }
    });
    sessions.push(started.session);
    const { socket, session } = started;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const readWarnings = () => warn.mock.calls.filter((call) => String(call[0]).includes("Could not read the transcript")).length;
    try {
      await openIdle(socket, session);
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      session.clearHistory();
      await vi.waitFor(() => expect(reads).toBe(1));
      // The retries come after 1 s, then 2 s, then 4 s.
      for (const [pause, after] of [[1000, 2], [2000, 3], [4000, 4]] as const) {
        await vi.advanceTimersByTimeAsync(pause);
        await vi.waitFor(() => expect(reads).toBe(after));
      }
      expect(readWarnings()).toBe(1);
      failing = false;
      await vi.advanceTimersByTimeAsync(8000);
      await vi.waitFor(() => expect(reads).toBe(5));
      // A new run of failures is said again.
      failing = true;
      session.clearHistory();
      await vi.waitFor(() => expect(reads).toBe(6));
      await vi.waitFor(() => expect(readWarnings()).toBe(2));
    } finally {
      vi.useRealTimers();
      warn.mockRestore();
    }
  });
});

