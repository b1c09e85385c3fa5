/**
 * Exact sync with a scripted socket: the frames an ordered server
 * (`agents-vue/server`) sends, in orderings the real one would produce only
 * by chance. The end-to-end tier runs the same rules against the real server.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useAgentChat, type UseAgentChatOptions } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

const user = (id: string, body = id): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: body }] });
const reply = (id: string, body: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: body }] });
const texts = (messages: readonly UIMessage[]) =>
  messages.map((message) => message.parts.map((part) => (part.type === "text" ? part.text : "")).join(""));
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const run of cleanup.splice(0)) run();
  vi.restoreAllMocks();
});

let rooms = 0;
/** A socket on an agent class of its own, so what one test teaches the page about that agent stays there. */
function orderedSocket(): FakeSocket {
  const socket = new FakeSocket();
  const agent = `ordered-agent-${++rooms}`;
  socket.agent = agent;
  socket._pkurl = `ws://exact.test/agents/${agent}/room`;
  return socket;
}

function mount(socket: FakeSocket, options: Partial<UseAgentChatOptions> = {}) {
  const mounted = mountComposable(() => useAgentChat({ agent: socket, resume: false, throttle: false, ...options }));
  cleanup.push(mounted.unmount);
  return mounted.result;
}

/** Fetches of `/get-messages`, answered with `stored`. */
function spyReads(stored: UIMessage[] = []) {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async () => Response.json(stored));
}

const connectFrame = (messages: UIMessage[], version?: number) => ({
  type: "cf_agent_chat_messages",
  messages,
  connect: true,
  ...(version === undefined ? {} : { version })
});

describe("exact sync: versioned transcripts", () => {
  it("a versioned connect-time transcript answers the first load; the read's later answer is dropped", async () => {
    let answer!: (response: Response) => void;
    vi.spyOn(globalThis, "fetch").mockImplementation(() => new Promise<Response>((resolve) => (answer = resolve)));
    const socket = orderedSocket();
    const chat = mount(socket);
    socket.open();
    socket.push(connectFrame([user("u1"), reply("a1", "stored")], 4));
    await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
    expect(texts(chat.messages.value)).toEqual(["u1", "stored"]);
    answer(Response.json([user("old")]));
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "stored"]);
  });

  it("a later chat on the same agent waits for the connect-time transcript and reads nothing over HTTP", async () => {
    const reads = spyReads([user("from-http")]);
    const first = orderedSocket();
    mount(first);
    first.open();
    first.push(connectFrame([user("u1")], 1));
    await settle();
    reads.mockClear();
    const second = new FakeSocket();
    second.agent = first.agent;
    second._pkurl = first._pkurl.replace(/room$/, "room-2");
    const chat = mount(second);
    second.open();
    second.push({ type: "cf_agent_identity", name: "room-2", agent: first.agent });
    second.push(connectFrame([user("u2")], 7));
    await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
    expect(texts(chat.messages.value)).toEqual(["u2"]);
    expect(reads).not.toHaveBeenCalled();
  });

  it("a transcript older than the base's version is not applied", async () => {
    const socket = orderedSocket();
    const chat = mount(socket, { initialMessages: [] });
    socket.open();
    socket.push(connectFrame([user("u1"), reply("a1", "new")], 5));
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")], version: 4 });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "new"]);
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1"), reply("a1", "new"), user("u2")], version: 6 });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "new", "u2"]);
  });

  it("an update that skips a version asks for a snapshot, and the snapshot is admitted", async () => {
    const socket = orderedSocket();
    const chat = mount(socket, { initialMessages: [] });
    socket.open();
    socket.push(connectFrame([user("u1"), reply("a1", "v1")], 1));
    socket.push({ type: "cf_agent_message_updated", message: reply("a1", "v2"), version: 2 });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "v2"]);
    expect(socket.sentOf("agents_vue_snapshot_request")).toHaveLength(0);
    // Version 3 never reached this socket.
    socket.push({ type: "cf_agent_message_updated", message: reply("a1", "v4"), version: 4 });
    const [request] = socket.sentOf("agents_vue_snapshot_request");
    expect(request).toEqual({ type: "agents_vue_snapshot_request", id: expect.any(String) });
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1"), reply("a1", "v4"), user("u3")], version: 4, snapshot: request!.id });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "v4", "u3"]);
    // An update for a version the snapshot covered is stale.
    socket.push({ type: "cf_agent_message_updated", message: reply("a1", "stale"), version: 3 });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "v4", "u3"]);
  });

  it("the inference rules do not run: a clear reads nothing and holds nothing, a reconnect reads nothing", async () => {
    const reads = spyReads();
    const socket = orderedSocket();
    const chat = mount(socket, { initialMessages: [] });
    socket.open();
    socket.push(connectFrame([user("u1"), reply("a1", "stored")], 3));
    chat.clearHistory();
    expect(socket.sentOf("cf_agent_chat_clear")).toHaveLength(1);
    // Another tab's broadcast from before the server took the clear: shown, until the clear's version follows.
    socket.push({ type: "cf_agent_chat_messages", messages: [user("u1"), reply("a1", "stored"), user("u2")], version: 4 });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "stored", "u2"]);
    socket.push({ type: "cf_agent_chat_messages", messages: [], version: 5 });
    await settle();
    expect(chat.messages.value).toEqual([]);
    socket.drop();
    socket.open();
    socket.push(connectFrame([user("u4")], 6));
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u4"]);
    expect(reads).not.toHaveBeenCalled();
  });

  it("a received clear carries its version; an older one is ignored", async () => {
    const socket = orderedSocket();
    const chat = mount(socket, { initialMessages: [] });
    socket.open();
    socket.push(connectFrame([user("u1")], 8));
    socket.push({ type: "cf_agent_chat_clear", version: 7 });
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1"]);
    socket.push({ type: "cf_agent_chat_clear", version: 9 });
    await settle();
    expect(chat.messages.value).toEqual([]);
  });

  it("a stream this client stopped reads nothing back when it ends", async () => {
    const reads = spyReads();
    const socket = orderedSocket();
    const chat = mount(socket, { initialMessages: [] });
    socket.open();
    socket.push(connectFrame([], 0));
    const sent = chat.sendMessage({ text: "q" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const id = String(socket.sentOf("cf_agent_use_chat_request")[0]!.id);
    const [start, textStart, delta] = textReply("a1", ["partial"]);
    for (const chunk of [start!, textStart!, delta!]) socket.chunk(id, chunk);
    await chat.stop();
    socket.done(id, { outcome: "aborted" });
    await sent;
    await settle();
    expect(reads).not.toHaveBeenCalled();
  });
});

describe("a reply a clear cut (exact sync; chaos seed 835076279)", () => {
  for (const stored of [false, true]) {
    it(`${stored ? "stays when the version before its end holds it" : "goes when no version holds it at its end"}`, async () => {
      spyReads();
      const socket = orderedSocket();
      const chat = mount(socket, { generateId: () => "u1" });
      socket.open();
      socket.push(connectFrame([], 0));
      await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
      void chat.sendMessage({ text: "question" }).catch(() => {});
      await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
      const id = socket.sentOf("cf_agent_use_chat_request")[0]!.id as string;
      socket.push({ type: "cf_agent_chat_messages", messages: [user("u1")], version: 1 });
      for (const chunk of textReply("a1", ["w0 ", "w1 "]).slice(0, 4)) socket.chunk(id, chunk);
      await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual(["u1", "a1"]));
      chat.clearHistory();
      // The clear's version reaches its sender as a whole transcript; the turn runs on after it.
      socket.push({ type: "cf_agent_chat_messages", messages: [], version: 2 });
      socket.chunk(id, { type: "text-delta", id: "t", delta: "w2 " });
      await vi.waitFor(() => expect(texts(chat.messages.value)).toEqual(["w0 w1 w2 "]));
      socket.chunk(id, { type: "text-end", id: "t" });
      socket.chunk(id, { type: "finish" });
      if (stored) socket.push({ type: "cf_agent_chat_messages", messages: [reply("a1", "w2 ")], version: 3 });
      socket.done(id);
      await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
      await settle();
      expect(chat.messages.value.map((m) => m.id)).toEqual(stored ? ["a1"] : []);
    });
  }
});

describe("connect-time transcripts without versions (a Think chat server)", () => {
  it("answer the first load as a snapshot, and a reconnect reads nothing", async () => {
    let answer!: (response: Response) => void;
    const reads = vi.spyOn(globalThis, "fetch").mockImplementation(() => new Promise<Response>((resolve) => (answer = resolve)));
    const socket = orderedSocket();
    const chat = mount(socket);
    socket.open();
    socket.push(connectFrame([user("u1"), reply("a1", "pushed")]));
    await vi.waitFor(() => expect(chat.isLoading.value).toBe(false));
    expect(texts(chat.messages.value)).toEqual(["u1", "pushed"]);
    answer(Response.json([]));
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "pushed"]);
    expect(reads).toHaveBeenCalledTimes(1);
    socket.drop();
    socket.open();
    socket.push(connectFrame([user("u1"), reply("a1", "pushed"), user("u2")]));
    await settle();
    expect(texts(chat.messages.value)).toEqual(["u1", "pushed", "u2"]);
    expect(reads).toHaveBeenCalledTimes(1);
  });
});
