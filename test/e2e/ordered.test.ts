/**
 * Exact sync's server half (`orderTranscript`) on the wire: a raw WebSocket
 * against `OrderedChatAgent` (the scripted agent with the server half), no
 * client library in between.
 */
import type { UIMessage } from "ai";
import { afterAll, describe, expect, it } from "vitest";
import { commands } from "vitest/browser";
import { CHAT_CLEAR, CHAT_MESSAGES, MESSAGE_UPDATED, SNAPSHOT_REQUEST } from "../../src/server/ordered-wire";
import { expectedText } from "../fixtures/worker/src/script";
import { agentHost, agentOrigin, kebab, post, uniqueName } from "../support/e2e";
import { RawSocket, chatRequest, userMessage, type Frame } from "../support/raw-socket";

const ORDERED = "OrderedChatAgent";

afterAll(async () => {
  await commands.chaosServerStop();
});

/** What two clients holding the same version must agree on: ids, roles, parts and their states. */
function digest(messages: readonly UIMessage[]): string[] {
  return messages.map(
    (message) =>
      `${message.role}:${message.id}:` +
      message.parts
        .map((part) => {
          if (part.type === "text") return `text(${part.text})`;
          const state = (part as { state?: unknown }).state;
          return typeof state === "string" ? `${part.type}(${state})` : part.type;
        })
        .join(",")
  );
}

const hasVersion = (frame: Frame) => typeof frame.version === "number";
/** Frames announcing a new version: broadcasts and catch-ups, not the connect frame or snapshot answers. */
const isChange = (frame: Frame) => hasVersion(frame) && frame.connect !== true && frame.snapshot === undefined;
const changes = (socket: RawSocket) => socket.frames.filter(isChange);
const lastVersion = (socket: RawSocket) => socket.frames.filter(hasVersion).at(-1)?.version as number;

/**
 * Replays a socket's connect frame and changes, as a client applies them:
 * the transcript it holds at each version.
 */
function transcriptsByVersion(socket: RawSocket): Map<number, string[]> {
  const byVersion = new Map<number, string[]>();
  let current: UIMessage[] = [];
  for (const frame of socket.frames) {
    if (!hasVersion(frame) || frame.snapshot !== undefined) continue;
    if (frame.type === CHAT_MESSAGES) current = frame.messages as UIMessage[];
    else if (frame.type === MESSAGE_UPDATED) {
      const updated = frame.message as UIMessage;
      current = current.map((message) => (message.id === updated.id ? updated : message));
    } else if (frame.type === CHAT_CLEAR) current = [];
    byVersion.set(frame.version as number, digest(current));
  }
  return byVersion;
}

/** Each change is one more than the frame before it, from the connect frame's version on. */
function expectConsecutive(socket: RawSocket) {
  const connect = socket.frames.find((frame) => frame.connect === true);
  expect(connect, "a connect frame").toBeDefined();
  const versions = changes(socket).map((frame) => frame.version as number);
  const from = connect!.version as number;
  expect(versions).toEqual(versions.map((_, index) => from + index + 1));
}

/**
 * One burst for the snapshot race: 25 rewrites from b, each followed by a snapshot request from a. Two sockets
 * give no order between them, so on a loaded machine every request can land before or after every rewrite; the
 * invariant is checked on each burst. Returns how many versions the answers span.
 */
async function snapshotRaceBurst(attempt: number): Promise<number> {
  const name = uniqueName(`ordered-snapshot-race-${attempt}`);
  const a = await RawSocket.open(ORDERED, name);
  const b = await RawSocket.open(ORDERED, name);
  await Promise.all([a, b].map((socket) => socket.waitFor((frame) => frame.connect === true)));
  const rewrites = 25;
  const transcript: UIMessage[] = [];
  for (let i = 0; i < rewrites; i++) {
    transcript.push(userMessage(`m${i}`, `rewrite ${i}`));
    b.send({ type: CHAT_MESSAGES, messages: [...transcript] });
    a.send({ type: SNAPSHOT_REQUEST, id: `s${i + 1}` });
  }
  await a.waitFor((frame) => isChange(frame) && (frame.messages as UIMessage[]).length === rewrites);
  await a.waitFor((frame) => frame.snapshot === `s${rewrites}`);

  const answers = a.frames.filter((frame) => frame.snapshot !== undefined);
  expect(answers).toHaveLength(rewrites);
  const byVersion = transcriptsByVersion(a);
  for (const answer of answers) {
    expect(digest(answer.messages as UIMessage[])).toEqual(byVersion.get(answer.version as number));
  }
  expectConsecutive(a);
  a.close();
  b.close();
  return new Set(answers.map((answer) => answer.version)).size;
}

async function stored(name: string, origin = agentOrigin()): Promise<UIMessage[]> {
  const response = await fetch(`${origin}/agents/${kebab(ORDERED)}/${encodeURIComponent(name)}/stored`);
  expect(response.ok).toBe(true);
  return (await response.json()) as UIMessage[];
}

const isDelta = (frame: Frame) =>
  frame.type === "cf_agent_use_chat_response" && typeof frame.body === "string" && frame.body.includes('"text-delta"');

describe("ordered transcript: the connect frame", () => {
  it("comes first on every socket, with the stored transcript and its version, before the resume offer", async () => {
    const name = uniqueName("ordered-connect");
    const a = await RawSocket.open(ORDERED, name);
    await a.waitFor((frame) => frame.type === CHAT_MESSAGES);
    expect(a.frames[0]).toEqual({ type: CHAT_MESSAGES, messages: [], version: 0, connect: true });

    // A socket that connects mid-stream: the transcript first, then the offer to resume.
    a.send(chatRequest("r1", [userMessage("u1", "first")], { chunks: 30, chunkDelayMs: 50 }));
    await a.waitFor(isDelta);
    const b = await RawSocket.open(ORDERED, name);
    const resuming = await b.waitFor((frame) => frame.type === "cf_agent_stream_resuming");
    expect(b.frames[0]).toMatchObject({ type: CHAT_MESSAGES, connect: true });
    expect(b.frames.indexOf(resuming)).toBeGreaterThan(0);
    // Exact: the connect frame holds what a socket that saw every change holds at that version.
    const connect = b.frames[0]!;
    expect(digest(connect.messages as UIMessage[])).toEqual(transcriptsByVersion(a).get(connect.version as number));

    await a.done("r1");
    const c = await RawSocket.open(ORDERED, name);
    await c.waitFor((frame) => frame.type === CHAT_MESSAGES);
    const transcript = await stored(name);
    expect(transcript.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(c.frames[0]).toEqual({ type: CHAT_MESSAGES, messages: transcript, version: lastVersion(a), connect: true });
    for (const socket of [a, b, c]) socket.close();
  });
});

describe("ordered transcript: versions", () => {
  it("go up by one per change, and the sender and every other socket see each version in order", async () => {
    const name = uniqueName("ordered-versions");
    const a = await RawSocket.open(ORDERED, name);
    const b = await RawSocket.open(ORDERED, name);
    await Promise.all([a, b].map((socket) => socket.waitFor((frame) => frame.connect === true)));

    // A turn from a: the echo of its request and the persists leave a out.
    a.send(chatRequest("r1", [userMessage("u1", "hello")], { chunks: 3 }));
    await Promise.all([a.done("r1"), b.done("r1")]);
    // setMessages from a.
    const edited = [...(await stored(name)), userMessage("u-set", "set by a")];
    a.send({ type: CHAT_MESSAGES, messages: edited });
    await b.waitFor((frame) => frame.type === CHAT_MESSAGES && (frame.messages as UIMessage[]).length === 3);
    // A clear from a.
    a.send({ type: CHAT_CLEAR });
    const clear = await b.waitFor((frame) => frame.type === CHAT_CLEAR);
    // A client tool call answered by a: a message update to everyone.
    a.send(
      chatRequest("r2", [userMessage("u2", "ask me")], {
        toolCalls: [{ toolName: "askUser", input: { question: "sure?" }, toolCallId: "call-1" }]
      })
    );
    await Promise.all([a.done("r2"), b.done("r2")]);
    a.send({ type: "cf_agent_tool_result", toolCallId: "call-1", toolName: "askUser", output: { answer: "yes" }, autoContinue: false });
    await Promise.all([a, b].map((socket) => socket.waitFor((frame) => frame.type === MESSAGE_UPDATED)));
    await expect.poll(() => lastVersion(a) === lastVersion(b) && lastVersion(a)).toBeGreaterThan(0);

    expectConsecutive(a);
    expectConsecutive(b);
    expect(changes(a).map((frame) => frame.version)).toEqual(changes(b).map((frame) => frame.version));
    // The sender got the whole transcript where a broadcast left it out: at the clear, an empty one.
    expect(changes(a).find((frame) => frame.version === clear.version)).toEqual({
      type: CHAT_MESSAGES,
      messages: [],
      version: clear.version
    });
    expect(changes(a).filter((frame) => frame.type === CHAT_CLEAR)).toHaveLength(0);
    // Same version, same transcript, on every socket; and the last one is what is stored.
    const onA = transcriptsByVersion(a);
    const onB = transcriptsByVersion(b);
    expect(onA).toEqual(onB);
    expect(onA.get(lastVersion(a))).toEqual(digest(await stored(name)));
    expect(digest(await stored(name)).at(-1)).toMatch(/tool-askUser\(output-available\)/);
    a.close();
    b.close();
  });

  it("survive an eviction mid-turn: a reconnecting socket never sees a lower version, and they keep going up", async () => {
    const name = uniqueName("ordered-evict");
    const { before, after } = await acrossRestart(name, agentHost(), async () => {
      const crash = await post(name, "crash", {}, ORDERED);
      expect(crash.status).toBe(202);
    });
    expect(after).toBeGreaterThan(before);
  });

  it("survive a server restart mid-turn (same persist dir): versions keep going up", async () => {
    const { host } = await commands.chaosServerStart();
    const name = uniqueName("ordered-restart");
    const { before, after } = await acrossRestart(name, host, async () => {
      await commands.chaosServerRestart(0);
    });
    expect(after).toBeGreaterThan(before);
  });
});

/**
 * A finished turn, a turn cut by `interrupt`, a reconnect, and one more turn:
 * the last version seen before the cut, and the last one after.
 */
async function acrossRestart(name: string, host: string, interrupt: () => Promise<void>): Promise<{ before: number; after: number }> {
  const a = await RawSocket.open(ORDERED, name, host);
  a.send(chatRequest("r1", [userMessage("u1", "before")], { chunks: 3 }));
  await a.done("r1");
  a.send(chatRequest("r2", [userMessage("u2", "cut short")], { chunks: 60, chunkDelayMs: 50 }));
  await a.waitFor(isDelta, { from: a.frames.findIndex((frame) => frame.id === "r2") });
  const before = lastVersion(a);
  expect(before).toBeGreaterThanOrEqual(5);
  await interrupt();
  await a.closed;
  expectConsecutive(a);

  const b = await RawSocket.open(ORDERED, name, host);
  const connect = await b.waitFor((frame) => frame.connect === true);
  expect(b.frames[0]).toBe(connect);
  expect(connect.version as number).toBeGreaterThanOrEqual(before);
  // The stored transcript at the version it names: what was stored before the cut is there.
  expect(digest(connect.messages as UIMessage[]).slice(0, 3)).toEqual([
    "user:u1:text(before)",
    expect.stringMatching(new RegExp(`^assistant:.*text\\(${expectedText(3)}\\)$`)),
    "user:u2:text(cut short)"
  ]);
  b.send(chatRequest("r3", [...(connect.messages as UIMessage[]), userMessage("u3", "after")], { chunks: 3 }));
  await b.done("r3", { timeout: 30_000 });
  await b.waitFor((frame) => isChange(frame) && (frame.messages as UIMessage[] | undefined)?.at(-1)?.role === "assistant" && (frame.messages as UIMessage[]).some((m) => m.id === "u3"));
  expectConsecutive(b);
  expect(lastVersion(b)).toBeGreaterThan(connect.version as number);
  b.close();
  return { before, after: lastVersion(b) };
}

describe("ordered transcript: snapshot requests", () => {
  it("are answered at once with the transcript and the version the socket is at, mid-turn and after", async () => {
    const name = uniqueName("ordered-snapshot");
    const a = await RawSocket.open(ORDERED, name);
    await a.waitFor((frame) => frame.connect === true);
    let asked = 0;
    const ask = () => a.send({ type: SNAPSHOT_REQUEST, id: `s${++asked}` });
    // One right behind the request (while it is persisted), then one per streamed delta.
    const stop = a.onFrame((frame) => {
      if (isDelta(frame) && asked < 12) ask();
    });
    a.send(chatRequest("r1", [userMessage("u1", "snap")], { chunks: 10, chunkDelayMs: 40 }));
    ask();
    await a.done("r1");
    stop();
    await a.waitFor((frame) => isChange(frame) && (frame.messages as UIMessage[] | undefined)?.length === 2);
    ask();
    const last = await a.waitFor((frame) => frame.snapshot === `s${asked}`);

    const answers = a.frames.filter((frame) => frame.snapshot !== undefined);
    expect(answers.map((frame) => frame.snapshot)).toEqual(Array.from({ length: asked }, (_, i) => `s${i + 1}`));
    const byVersion = transcriptsByVersion(a);
    for (const answer of answers) {
      const index = a.frames.indexOf(answer);
      const before = a.frames.slice(0, index).filter((frame) => hasVersion(frame) && frame.snapshot === undefined).at(-1);
      // The version the socket had reached when the answer arrived, and that version's transcript.
      expect(answer.version).toBe(before!.version);
      expect(digest(answer.messages as UIMessage[])).toEqual(byVersion.get(answer.version as number));
    }
    expect(last.version).toBe(lastVersion(a));
    expect(last.messages).toEqual(await stored(name));
    expectConsecutive(a);
    a.close();
  });

  it("never mix one version's transcript with another's, while another socket rewrites it as fast as it can", async () => {
    // Bursts repeat (each on a fresh agent) until one had its answers land among the rewrites.
    let versions = 0;
    for (let attempt = 1; attempt <= 5 && versions < 2; attempt++) versions = await snapshotRaceBurst(attempt);
    expect(versions, "a burst whose snapshot answers span more than one version").toBeGreaterThan(1);
  });
});
