import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CHAT_MESSAGES,
  SNAPSHOT_REQUEST,
  orderTranscript,
  withOrderedTranscript,
  withPartialRequests
} from "../../src/server";

const msg = (id: string, role: UIMessage["role"] = "user", text = id): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text }]
});

type Frame = Record<string, unknown>;

class FakeConnection {
  readonly raw: string[] = [];
  closed = false;
  constructor(readonly id: string) {}
  send(message: string) {
    if (this.closed) throw new Error("WebSocket is closed");
    this.raw.push(typeof message === "string" ? message : "(binary)");
  }
  get frames(): Frame[] {
    return this.raw.flatMap((text) => {
      try {
        return [JSON.parse(text) as Frame];
      } catch {
        return [];
      }
    });
  }
  /** The versions of the transcript frames this socket got, in order. */
  get versions(): number[] {
    return this.frames.filter((frame) => typeof frame.version === "number").map((frame) => frame.version as number);
  }
}

/** Storage that outlives an agent instance, like a Durable Object's. */
type Storage = { version?: unknown };

/**
 * The parts of an `AIChatAgent` ordering touches, with the same behaviour:
 * `broadcast` skips `without`, `sql` keeps one row, and the inner hooks
 * stand for the agent's own (the connect hook offers a resume, say).
 */
class FakeAgent {
  messages: UIMessage[] = [];
  readonly connections = new Map<string, FakeConnection>();
  readonly handled: unknown[] = [];
  /** What reached the agent's own broadcast, after ordering. */
  readonly broadcasts: Array<{ message: unknown; without: string[] | undefined }> = [];
  constructor(readonly storage: Storage = {}) {}

  sql<T>(strings: TemplateStringsArray, ...values: Array<string | number | boolean | null>): T[] {
    const query = strings.join("?").trim().toLowerCase();
    if (query.startsWith("select")) return ("version" in this.storage ? [{ version: this.storage.version }] : []) as T[];
    if (query.startsWith("insert")) this.storage.version = values[0];
    return [];
  }

  broadcast(message: string | ArrayBuffer | ArrayBufferView, without?: string[]) {
    this.broadcasts.push({ message, without });
    for (const connection of this.connections.values()) {
      if (without?.includes(connection.id)) continue;
      connection.send(message as string);
    }
  }

  getConnection(id: string) {
    return this.connections.get(id);
  }

  onConnect(connection: never, _ctx: never): void {
    (connection as FakeConnection).send(JSON.stringify({ type: "cf_agent_stream_resuming", id: "r1" }));
  }

  /** As `AIChatAgent`, a client's `cf_agent_chat_messages` is persisted (added and updated only), leaving the sender out of the broadcast. */
  onMessage(connection: never, message: never): Promise<void> | void {
    this.handled.push(message);
    const data = JSON.parse(message as string) as { type?: string; messages?: UIMessage[] };
    if (data.type === CHAT_MESSAGES && data.messages) return this.persistMessages(data.messages, [(connection as FakeConnection).id]);
  }

  /** As `AIChatAgent`: adds and updates; `_deleteStaleRows` deletes what a list of stored messages leaves out; then broadcasts the list. */
  async persistMessages(messages: UIMessage[], without: string[] = [], options?: { _deleteStaleRows?: boolean }): Promise<void> {
    await Promise.resolve();
    const prior = this.messages;
    let next = [...prior];
    for (const message of messages) {
      const at = next.findIndex((stored) => stored.id === message.id);
      if (at >= 0) next[at] = message;
      else next.push(message);
    }
    const priorIds = new Set(prior.map((message) => message.id));
    // oxlint-disable-next-line eslint/no-underscore-dangle -- AIChatAgent's own option name
    if (options?._deleteStaleRows && messages.every((message) => priorIds.has(message.id))) {
      const listed = new Set(messages.map((message) => message.id));
      next = next.filter((message) => listed.has(message.id));
    }
    this.messages = next;
    this.broadcast(messagesFrame(messages), without);
  }

  connect(id: string): FakeConnection {
    const connection = new FakeConnection(id);
    this.connections.set(id, connection);
    this.onConnect(connection as never, { request: {} } as never);
    return connection;
  }

  receive(connection: FakeConnection, frame: unknown) {
    return this.onMessage(connection as never, (typeof frame === "string" ? frame : JSON.stringify(frame)) as never);
  }
}

function orderedAgent(storage: Storage = {}) {
  const agent = new FakeAgent(storage);
  orderTranscript(agent);
  return agent;
}

const messagesFrame = (messages: UIMessage[]) => JSON.stringify({ messages, type: CHAT_MESSAGES });
const updatedFrame = (message: UIMessage) => JSON.stringify({ type: "cf_agent_message_updated", message });
const clearFrame = JSON.stringify({ type: "cf_agent_chat_clear" });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("orderTranscript: versions", () => {
  it("stamps every transcript frame with a version one more than the last, starting from 0", () => {
    const agent = orderedAgent();
    const a = agent.connect("a");
    const b = agent.connect("b");
    agent.messages = [msg("u1")];
    agent.broadcast(messagesFrame([msg("u1")]));
    agent.broadcast(updatedFrame(msg("u1", "user", "edited")));
    agent.messages = [];
    agent.broadcast(clearFrame);
    for (const socket of [a, b]) {
      expect(socket.versions).toEqual([0, 1, 2, 3]);
      const [, messages, updated, clear] = socket.frames.filter((frame) => "version" in frame);
      expect(messages).toEqual({ type: CHAT_MESSAGES, messages: [msg("u1")], version: 1 });
      expect(updated).toEqual({ type: "cf_agent_message_updated", message: msg("u1", "user", "edited"), version: 2 });
      expect(clear).toEqual({ type: "cf_agent_chat_clear", version: 3 });
    }
  });

  it("leaves every other message as it was, even a chunk whose text names a transcript frame", () => {
    const agent = orderedAgent();
    const a = agent.connect("a");
    const chunk = JSON.stringify({
      type: "cf_agent_use_chat_response",
      id: "r1",
      body: JSON.stringify({ type: "text-delta", delta: '"cf_agent_chat_clear" is a frame type' }),
      done: false
    });
    const binary = new Uint8Array([1, 2, 3]);
    const others = [chunk, binary, '{"type":"cf_agent_chat_messages","messages":"not a list"}', "not json"];
    for (const message of others) agent.broadcast(message);
    expect(agent.broadcasts).toEqual(others.map((message) => ({ message, without: undefined })));
    agent.broadcasts.forEach(({ message }, index) => expect(message).toBe(others[index]));
    expect(a.versions).toEqual([0]);
  });

  it("keeps the version in storage, so a restarted agent goes on from where it was", () => {
    const storage: Storage = {};
    const first = orderedAgent(storage);
    first.broadcast(messagesFrame([msg("u1")]));
    first.broadcast(messagesFrame([msg("u1"), msg("a1", "assistant")]));
    expect(storage.version).toBe(2);

    const second = orderedAgent(storage);
    second.messages = [msg("u1"), msg("a1", "assistant")];
    const a = second.connect("a");
    expect(a.frames[0]).toMatchObject({ version: 2, connect: true });
    second.messages = [];
    second.broadcast(clearFrame);
    expect(a.versions).toEqual([2, 3]);
    expect(storage.version).toBe(3);
  });

  it("counts from 0 when the stored version is missing or not a positive integer", () => {
    for (const version of [undefined, -4, 1.5, "7", null]) {
      const agent = orderedAgent(version === undefined ? {} : { version });
      expect(agent.connect("a").versions).toEqual([0]);
    }
  });

  it("overwrites a version the frame already carried instead of sending two", () => {
    const agent = orderedAgent();
    const a = agent.connect("a");
    agent.broadcast(JSON.stringify({ type: "cf_agent_chat_clear", version: 99 }));
    expect(a.raw.at(-1)).toBe('{"type":"cf_agent_chat_clear","version":1}');
  });
});

describe("orderTranscript: a whole frame is the stored transcript", () => {
  // A chat request of a client that had not seen another client's message: `AIChatAgent` broadcasts the request's
  // list before it writes it, and again once written, while it stores the other message too (property test, ordered world).
  it("a list the agent broadcasts that is not what it stores goes as what it stores, at that version, on every socket", async () => {
    const agent = orderedAgent();
    agent.messages = [msg("o1")];
    const [sender, other] = [agent.connect("sender"), agent.connect("other")];
    agent.broadcast(messagesFrame([msg("u2")]), ["sender"]);
    await agent.persistMessages([msg("u2")], ["sender"], { _deleteStaleRows: true });
    expect(ids(agent.messages)).toEqual(["o1", "u2"]);
    for (const socket of [sender, other]) {
      expect(socket.versions).toEqual([0, 1, 2]);
      const [, before, after] = socket.frames.filter((frame) => "version" in frame);
      expect(ids(before!.messages as UIMessage[])).toEqual(["o1"]);
      expect(ids(after!.messages as UIMessage[])).toEqual(["o1", "u2"]);
    }
  });

  it("a list that is what the agent stores goes as the agent wrote it", () => {
    const agent = orderedAgent();
    const a = agent.connect("a");
    agent.messages = [msg("u1")];
    const frame = messagesFrame([msg("u1", "user", "as the agent wrote it")]);
    agent.broadcast(frame);
    expect(a.raw.at(-1)).toBe(`${frame.slice(0, -1)},"version":1}`);
  });
});

describe("orderTranscript: sockets a broadcast leaves out", () => {
  it("get the same full transcript frame when the frame is a full transcript", () => {
    const agent = orderedAgent();
    const sender = agent.connect("sender");
    const other = agent.connect("other");
    agent.messages = [msg("u1")];
    agent.broadcast(messagesFrame([msg("u1")]), ["sender"]);
    expect(sender.raw.at(-1)).toBe(other.raw.at(-1));
    expect(sender.frames.at(-1)).toEqual({ type: CHAT_MESSAGES, messages: [msg("u1")], version: 1 });
  });

  it("get the transcript with the update applied instead of a message update", () => {
    const agent = orderedAgent();
    agent.messages = [msg("u1"), msg("a1", "assistant", "old")];
    const waiting = agent.connect("waiting");
    const other = agent.connect("other");
    agent.broadcast(updatedFrame(msg("a1", "assistant", "new")), ["waiting"]);
    expect(other.frames.at(-1)).toMatchObject({ type: "cf_agent_message_updated", version: 1 });
    expect(waiting.frames.at(-1)).toEqual({
      type: CHAT_MESSAGES,
      messages: [msg("u1"), msg("a1", "assistant", "new")],
      version: 1
    });
  });

  it("get an empty transcript instead of a clear", () => {
    const agent = orderedAgent();
    agent.messages = [msg("u1")];
    const sender = agent.connect("sender");
    // AIChatAgent empties the transcript before it broadcasts the clear.
    agent.messages = [];
    agent.broadcast(clearFrame, ["sender"]);
    expect(sender.frames.at(-1)).toEqual({ type: CHAT_MESSAGES, messages: [], version: 1 });
  });

  it("a clear that interrupted a turn is followed by what the agent stored meanwhile, at the next version, on every socket", () => {
    const agent = orderedAgent();
    const sender = agent.connect("sender");
    const other = agent.connect("other");
    // The aborted turn's partial reply was stored after the transcript was emptied, before the clear went out.
    agent.messages = [msg("a1", "assistant", "partial")];
    agent.broadcast(clearFrame, ["sender"]);
    for (const socket of [sender, other]) {
      expect(socket.frames.at(-1)).toEqual({ type: CHAT_MESSAGES, messages: [msg("a1", "assistant", "partial")], version: 2 });
      expect(socket.versions).toEqual([0, 1, 2]);
    }
  });

  it("once each, skipping ids that are gone or closed", () => {
    const agent = orderedAgent();
    const sender = agent.connect("sender");
    const closed = agent.connect("closed");
    closed.closed = true;
    agent.connections.delete("closed");
    const left = agent.connect("left");
    left.closed = true;
    expect(() => agent.broadcast(clearFrame, ["sender", "sender", "gone", "left"])).not.toThrow();
    expect(sender.versions).toEqual([0, 1]);
  });

  it("see every version in order, alongside the sockets that got the broadcast", () => {
    const agent = orderedAgent();
    const a = agent.connect("a");
    const b = agent.connect("b");
    agent.broadcast(messagesFrame([msg("u1")]), ["a"]);
    agent.broadcast(messagesFrame([msg("u1")]), ["b"]);
    agent.broadcast(updatedFrame(msg("u1", "user", "x")), ["a", "b"]);
    agent.broadcast(clearFrame);
    expect(a.versions).toEqual([0, 1, 2, 3, 4]);
    expect(b.versions).toEqual([0, 1, 2, 3, 4]);
  });
});

describe("orderTranscript: connect and snapshots", () => {
  it("greets a new socket with the stored transcript and its version before anything else", () => {
    const agent = orderedAgent();
    agent.messages = [msg("u1"), msg("a1", "assistant")];
    agent.broadcast(messagesFrame(agent.messages));
    const a = agent.connect("a");
    expect(a.frames[0]).toEqual({ type: CHAT_MESSAGES, messages: agent.messages, version: 1, connect: true });
    expect(a.frames[1]).toMatchObject({ type: "cf_agent_stream_resuming" });
  });

  it("answers a snapshot request at once, with the transcript and version, and keeps it from the agent", () => {
    const agent = orderedAgent();
    const a = agent.connect("a");
    agent.messages = [msg("u1")];
    agent.broadcast(messagesFrame(agent.messages));
    agent.receive(a, { type: SNAPSHOT_REQUEST, id: "s1" });
    expect(a.frames.at(-1)).toEqual({ type: CHAT_MESSAGES, messages: [msg("u1")], version: 1, snapshot: "s1" });
    expect(agent.handled).toEqual([]);
    agent.receive(a, { type: "cf_agent_chat_clear" });
    expect(agent.handled).toHaveLength(1);
  });

  it("answers a snapshot request without a string id, and warns about it", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const agent = orderedAgent();
    const a = agent.connect("a");
    agent.receive(a, { type: SNAPSHOT_REQUEST, id: 7 });
    expect(a.frames.at(-1)).toMatchObject({ type: CHAT_MESSAGES, version: 0, snapshot: "" });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("without a string id"));
  });

  it("leaves the sockets of a sub-agent (facet) to the sub-agent", () => {
    class Parent extends FakeAgent {
      _cf_requestTargetsSubAgent(request: { facet?: boolean }) {
        return request.facet === true;
      }
      _cf_connectionTargetsSubAgent(connection: FakeConnection) {
        return connection.id.startsWith("facet");
      }
    }
    const agent = new Parent();
    orderTranscript(agent);
    const facet = new FakeConnection("facet-1");
    agent.connections.set(facet.id, facet);
    agent.onConnect(facet as never, { request: { facet: true } } as never);
    expect(facet.frames.map((frame) => frame.type)).toEqual(["cf_agent_stream_resuming"]);
    agent.receive(facet, { type: SNAPSHOT_REQUEST, id: "s1" });
    expect(agent.handled).toHaveLength(1);
  });
});

const stored4 = () => [msg("u1"), msg("a1", "assistant"), msg("u2"), msg("a2", "assistant")];
const frameOf = (socket: FakeConnection) => socket.frames.at(-1) as { messages: UIMessage[]; version: number };
const ids = (messages: UIMessage[]) => messages.map((message) => message.id);

describe("orderTranscript: a client's setMessages list", () => {

  it("that only removes is stored as the list, at one version every socket gets, the sender too", async () => {
    const agent = orderedAgent();
    agent.messages = stored4();
    const [a, b] = [agent.connect("a"), agent.connect("b")];
    await agent.receive(a, { type: CHAT_MESSAGES, messages: stored4().slice(0, 2) });
    expect(ids(agent.messages)).toEqual(["u1", "a1"]);
    for (const socket of [a, b]) {
      expect(socket.versions).toEqual([0, 1]);
      expect(ids(frameOf(socket).messages)).toEqual(["u1", "a1"]);
    }
  });

  it("that removes, changes and adds is stored as the list: the removal at one version, the rest at the next", async () => {
    const agent = orderedAgent();
    agent.messages = stored4();
    const [a, b] = [agent.connect("a"), agent.connect("b")];
    const list = [msg("u1", "user", "edited"), msg("a2", "assistant"), msg("u3")];
    await agent.receive(a, { type: CHAT_MESSAGES, messages: list });
    expect(agent.messages).toEqual(list);
    for (const socket of [a, b]) {
      expect(socket.versions).toEqual([0, 1, 2]);
      expect(frameOf(socket)).toMatchObject({ messages: list, version: 2 });
    }
  });

  it("that the agent stores in another order is answered with what it stores, at that version, on every socket", async () => {
    const agent = orderedAgent();
    agent.messages = [msg("u1"), msg("a1", "assistant")];
    const [a, b] = [agent.connect("a"), agent.connect("b")];
    await agent.receive(a, { type: CHAT_MESSAGES, messages: [msg("a1", "assistant"), msg("u1")] });
    for (const socket of [a, b]) {
      expect(socket.versions).toEqual([0, 1]);
      expect(ids(frameOf(socket).messages)).toEqual(["u1", "a1"]);
    }
  });

  it("is only the client's own frame: a chat request whose text names the frame type passes as it came", async () => {
    const agent = orderedAgent();
    agent.messages = stored4();
    const a = agent.connect("a");
    const request = JSON.stringify({
      type: "cf_agent_use_chat_request",
      id: "r1",
      init: { method: "POST", body: JSON.stringify({ messages: [msg("u1", "user", '{"type":"cf_agent_chat_messages","messages":[]}')] }) }
    });
    await agent.receive(a, request);
    expect(agent.handled).toEqual([request]);
    expect(ids(agent.messages)).toEqual(ids(stored4()));
    expect(a.versions).toEqual([0]);
  });

  it("that removes nothing is the agent's as before: one version", async () => {
    const agent = orderedAgent();
    agent.messages = [msg("u1")];
    const a = agent.connect("a");
    await agent.receive(a, { type: CHAT_MESSAGES, messages: [msg("u1"), msg("u2")] });
    expect(ids(agent.messages)).toEqual(["u1", "u2"]);
    expect(a.versions).toEqual([0, 1]);
  });
});

describe("orderTranscript: installing", () => {
  it("refuses to order an agent twice, with a warning", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const agent = orderedAgent();
    orderTranscript(agent);
    const a = agent.connect("a");
    agent.broadcast(clearFrame);
    expect(a.versions).toEqual([0, 1]);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("already ordered"));
  });

  it("mixes in from the constructor, together with withPartialRequests in either order", () => {
    const partial = JSON.stringify({
      type: "cf_agent_use_chat_request",
      id: "r1",
      init: { method: "POST", body: JSON.stringify({ messages: [msg("u2")], afterMessageId: "u1" }) }
    });
    for (const Mixed of [withOrderedTranscript(withPartialRequests(FakeAgent)), withPartialRequests(withOrderedTranscript(FakeAgent))]) {
      const agent = new Mixed();
      agent.messages = [msg("u1")];
      const a = agent.connect("a");
      expect(a.frames[0]).toMatchObject({ type: CHAT_MESSAGES, version: 0, connect: true });
      agent.receive(a, partial);
      agent.receive(a, { type: SNAPSHOT_REQUEST, id: "s1" });
      expect(agent.handled).toHaveLength(1);
      const body = JSON.parse(JSON.parse(agent.handled[0] as string).init.body);
      expect(body.messages.map((m: UIMessage) => m.id)).toEqual(["u1", "u2"]);
      expect(a.frames.at(-1)).toMatchObject({ snapshot: "s1", version: 0 });
    }
    // @ts-expect-error a class that is not an agent is refused (typecheck)
    expect(() => withOrderedTranscript(class NotAnAgent {
      label = "no broadcast, no messages";
    })).not.toThrow();
  });
});
