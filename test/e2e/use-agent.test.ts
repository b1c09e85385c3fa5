import { describe, expect, it, vi } from "vitest";
import { nextTick, ref } from "vue";
import { type UseAgentOptions, useAgent, useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { CHAT_AGENT, type LogEntry, STOCK_AGENT, agentHost, post, readLog, textOf, uniqueName, waitForLog } from "../support/e2e";
import { mountComposable } from "../support/mount";

const STATEFUL = "StatefulAgent";

interface CounterState {
  count: number;
  label: string;
}

/** The client-visible shape of the fixture's StatefulAgent. */
interface CounterAgent {
  get state(): CounterState;
  add(a: number, b: number): number;
  fail(message: string): never;
  increment(): number;
  countTo(n: number, delayMs?: number): Promise<void>;
  slow(ms: number, value?: string): Promise<string | number>;
}

type CounterOptions = Omit<UseAgentOptions<CounterState>, "agent">;

function openCounter(name: UseAgentOptions["name"], options: CounterOptions = {}) {
  return mountComposable(() => useAgent<CounterAgent>({ agent: STATEFUL, host: agentHost(), name, ...options }));
}

const connectsOf = (entries: LogEntry[]) => entries.filter((entry) => entry.kind === "connect");
const rpcFramesOf = (entries: LogEntry[]) => entries.filter((entry) => entry.kind === "frame" && entry.type === "rpc");
const rpcMethodsOf = (entries: LogEntry[]) => rpcFramesOf(entries).map((entry) => entry.method);
/** Settles with the rejection message, so a rejection that comes later is never unhandled. */
const rejectionOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: Error) => error.message
  );

function openOwnerAndChat(name: UseAgentOptions["name"], query?: UseAgentOptions["query"]) {
  const owner = mountComposable(() => useAgent({ agent: CHAT_AGENT, host: agentHost(), name, query }));
  const chat = mountComposable(() => useAgentChat({ agent: owner.result }));
  return { owner, chat };
}

describe("useAgent: state", () => {
  it("setState in one component shows in the other's state; the server's own setState shows in both", async () => {
    const name = uniqueName("sync");
    const updatesA: Array<[CounterState, string]> = [];
    const updatesB: Array<[CounterState, string]> = [];
    const a = openCounter(name, { onStateUpdate: (state, source) => updatesA.push([state, source]) });
    const b = openCounter(name, { onStateUpdate: (state, source) => updatesB.push([state, source]) });
    await Promise.all([a.result.ready, b.result.ready]);
    expect(b.result.state.value).toEqual({ count: 0, label: "initial" });

    a.result.setState({ count: 5, label: "from A" });
    expect(a.result.state.value).toEqual({ count: 5, label: "from A" });
    expect(updatesA.at(-1)).toEqual([{ count: 5, label: "from A" }, "client"]);
    await vi.waitFor(() => expect(b.result.state.value).toEqual({ count: 5, label: "from A" }));
    expect(updatesB.at(-1)).toEqual([{ count: 5, label: "from A" }, "server"]);
    const frame = await waitForLog(name, (entry) => entry.kind === "frame" && entry.type === "cf_agent_state", { agent: STATEFUL });
    expect(frame.state).toEqual({ count: 5, label: "from A" });

    const response = await post(name, "set-state", { count: 9, label: "server" }, STATEFUL);
    expect(response.ok).toBe(true);
    await vi.waitFor(() => {
      expect(a.result.state.value).toEqual({ count: 9, label: "server" });
      expect(b.result.state.value).toEqual({ count: 9, label: "server" });
    });
    expect(updatesA.at(-1)?.[1]).toBe("server");
    a.unmount();
    b.unmount();
  });

  it("ready settles only after the stored state arrived (identity with stateFollows, rule 107)", async () => {
    const name = uniqueName("ready");
    expect((await post(name, "set-state", { count: 42, label: "stored" }, STATEFUL)).ok).toBe(true);
    const { result: agent, unmount } = openCounter(name);
    expect(agent.identity.value).toBeNull();
    await agent.ready;
    // Read synchronously after ready: no waiting for a later frame.
    expect(agent.state.value).toEqual({ count: 42, label: "stored" });
    expect(agent.identity.value).toEqual({ agent: "stateful-agent", name });
    expect(agent.status.value).toBe("open");
    unmount();
  });

  it("a callable's own setState reaches state, and state is kept across a reconnect", async () => {
    const name = uniqueName("keep");
    const { result: agent, unmount } = openCounter(name);
    await agent.ready;
    expect(await agent.stub.increment()).toBe(1);
    await vi.waitFor(() => expect(agent.state.value?.count).toBe(1));
    agent.reconnect();
    expect(agent.status.value).toBe("connecting");
    // Upstream never resets state on close: it stays until the next broadcast.
    expect(agent.state.value?.count).toBe(1);
    await vi.waitFor(() => expect(agent.status.value).toBe("open"));
    expect(connectsOf(await readLog(name, STATEFUL))).toHaveLength(2);
    unmount();
  });
});

describe("useAgent: calls", () => {
  it("call returns the callable's value; stub.m(...args) is call('m', args); await/JSON of the stub send nothing (rule 113)", async () => {
    const name = uniqueName("call");
    const { result: agent, unmount } = openCounter(name);
    await agent.ready;
    expect(await agent.call("add", [2, 3])).toBe(5);
    expect(await agent.stub.add(4, 5)).toBe(9);
    expect(JSON.stringify(agent.stub)).toBe("{}");
    expect(await Promise.resolve(agent.stub)).toBe(agent.stub);
    const rpcs = rpcFramesOf(await readLog(name, STATEFUL));
    expect(rpcs.map((entry) => [entry.method, entry.args])).toEqual([
      ["add", [2, 3]],
      ["add", [4, 5]]
    ]);
    unmount();
  });

  it("a throwing callable rejects with its message", async () => {
    const { result: agent, unmount } = openCounter(uniqueName("fail"));
    await expect(agent.call("fail", ["no such widget"])).rejects.toThrowError("no such widget");
    // The connection is fine afterwards.
    expect(await agent.stub.add(1, 1)).toBe(2);
    unmount();
  });

  it("a streaming callable delivers its chunks in order, then the final value (rule 114)", async () => {
    const { result: agent, unmount } = openCounter(uniqueName("stream"));
    const events: unknown[] = [];
    const result = await agent.call("countTo", [5, 10], {
      stream: {
        onChunk: (chunk) => events.push(["chunk", chunk]),
        onDone: (value) => events.push(["done", value]),
        onError: (error) => events.push(["error", error])
      }
    });
    expect(result).toBe("done");
    expect(events).toEqual([["chunk", 1], ["chunk", 2], ["chunk", 3], ["chunk", 4], ["chunk", 5], ["done", "done"]]);
    unmount();
  });

  it("a call made before the socket opened is sent when it opens (rule 110)", async () => {
    const name = uniqueName("queued");
    const { result: agent, unmount } = openCounter(name);
    expect(agent.status.value).toBe("connecting");
    const sum = agent.call("add", [20, 22]);
    expect(await sum).toBe(42);
    expect(rpcFramesOf(await readLog(name, STATEFUL))).toHaveLength(1);
    unmount();
  });

  it("a call in flight on a socket that closes rejects with 'Connection closed' (rule 110)", async () => {
    const name = uniqueName("inflight");
    const { result: agent, unmount } = openCounter(name);
    await agent.ready;
    const slow = agent.call("slow", [5000]);
    await waitForLog(name, (entry) => entry.kind === "frame" && entry.type === "rpc", { agent: STATEFUL });
    agent.reconnect();
    await expect(slow).rejects.toThrowError(/^Connection closed$/);
    await vi.waitFor(() => expect(agent.status.value).toBe("open"));
    expect(await agent.stub.add(1, 2)).toBe(3);
    unmount();
  });

  it("a call without an answer rejects after defaultCallTimeout; an explicit timeout wins (rule 109)", async () => {
    const { result: agent, unmount } = openCounter(uniqueName("timeout"), { defaultCallTimeout: 150 });
    await agent.ready;
    const errors: string[] = [];
    await expect(agent.call("slow", [3000])).rejects.toThrowError("RPC call to slow timed out after 150ms");
    await expect(agent.call("slow", [3000], { timeout: 80, stream: { onError: (e) => errors.push(e) } })).rejects.toThrowError(
      "RPC call to slow timed out after 80ms"
    );
    expect(errors).toEqual(["RPC call to slow timed out after 80ms"]);
    expect(await agent.call("slow", [300, "late but fine"], { timeout: 0 })).toBe("late but fine");
    unmount();
  });
});

describe("useAgent: address changes", () => {
  it("changing name reconnects to the new instance: server sees the connection, identity and state follow", async () => {
    const first = uniqueName("first");
    const second = uniqueName("second");
    expect((await post(second, "set-state", { count: 7, label: "second" }, STATEFUL)).ok).toBe(true);
    const name = ref(first);
    const identities: string[] = [];
    const { result: agent, unmount } = openCounter(name, { onIdentity: (n) => identities.push(n) });
    await agent.ready;
    expect(agent.identity.value).toEqual({ agent: "stateful-agent", name: first });
    expect(agent.state.value).toEqual({ count: 0, label: "initial" });
    const oldClient = agent.client.value;
    const firstConnect = await waitForLog(first, (entry) => entry.kind === "connect", { agent: STATEFUL });

    name.value = second;
    await nextTick();
    expect(agent.client.value).not.toBe(oldClient);
    expect(agent.identity.value).toBeNull();
    expect(agent.status.value).toBe("connecting");
    await agent.ready;
    expect(agent.identity.value).toEqual({ agent: "stateful-agent", name: second });
    expect(agent.state.value).toEqual({ count: 7, label: "second" });
    expect(identities).toEqual([first, second]);
    expect(connectsOf(await readLog(second, STATEFUL))).toHaveLength(1);
    // The replaced client was closed by us, not left to linger.
    await waitForLog(first, (entry) => entry.kind === "close" && entry.connectionId === firstConnect.connectionId, {
      agent: STATEFUL
    });
    expect(await agent.stub.add(1, 2)).toBe(3);
    expect(rpcFramesOf(await readLog(second, STATEFUL))).toHaveLength(1);
    unmount();
  });

  it("an address change rejects queued calls with the address-change message and in-flight ones as closed (rule 115)", async () => {
    const first = uniqueName("from");
    const second = uniqueName("to");
    const name = ref(first);
    const { result: agent, unmount } = openCounter(name);
    await agent.ready;
    const inFlight = agent.call("slow", [5000]);
    await waitForLog(first, (entry) => entry.kind === "frame" && entry.type === "rpc", { agent: STATEFUL });

    name.value = second;
    await nextTick();
    // The new client is still connecting: this call waits in its buffer...
    const queuedOnNew = agent.call("add", [1, 1]);
    const streamErrors: string[] = [];
    const discarded = rejectionOf(queuedOnNew);
    // ...and a later change discards it before it could be sent anywhere.
    name.value = first;
    await expect(inFlight).rejects.toThrowError("Connection closed: the agent address changed before the response arrived");
    expect(await discarded).toBe("Call discarded: the agent address changed before the request could be sent");

    const onFirstAgain = agent.call("countTo", [2], { stream: { onError: (e) => streamErrors.push(e) } });
    expect(await onFirstAgain).toBe("done");
    expect(streamErrors).toEqual([]);
    // The discarded call reached neither instance.
    expect(rpcMethodsOf(await readLog(first, STATEFUL))).toEqual(["slow", "countTo"]);
    expect(rpcMethodsOf(await readLog(second, STATEFUL))).toEqual([]);
    unmount();
  });

  it("a token-only query change reconnects the same client object", async () => {
    const name = uniqueName("token");
    const query = ref({ token: "t1" });
    const { result: agent, unmount } = openCounter(name, { query });
    await agent.ready;
    const client = agent.client.value;
    expect(client.url).toContain("token=t1");
    const before = await waitForLog(name, (entry) => entry.kind === "connect", { agent: STATEFUL });
    expect(before.queryKeys).toContain("token");

    query.value.token = "t2";
    await vi.waitFor(() => expect(client.url).toContain("token=t2"));
    await vi.waitFor(() => expect(agent.status.value).toBe("open"));
    expect(agent.client.value).toBe(client);
    await waitForLog(name, (entry) => entry.kind === "close" && entry.connectionId === before.connectionId, { agent: STATEFUL });
    const connects = connectsOf(await readLog(name, STATEFUL));
    expect(connects).toHaveLength(2);
    expect(agent.identity.value).toEqual({ agent: "stateful-agent", name });
    unmount();
  });

  // Upstream #836: a cached async query reused an expired token on reconnect.
  it("a query function is asked again on every connect (fresh tokens)", async () => {
    const name = uniqueName("token-fn");
    let issued = 0;
    const { result: agent, unmount } = openCounter(name, {
      query: async () => ({ token: `tok-${++issued}` })
    });
    await agent.ready;
    expect(agent.client.value.url).toContain("token=tok-1");
    agent.reconnect();
    await vi.waitFor(() => expect(agent.client.value.url).toContain("token=tok-2"));
    await vi.waitFor(() => expect(agent.status.value).toBe("open"));
    unmount();
  });
});

describe("useAgent: connection lifecycle", () => {
  it("onMessage gets only frames outside the agent protocol, including non-JSON ones", async () => {
    const name = uniqueName("messages");
    const seen: unknown[] = [];
    const { result: agent, unmount } = openCounter(name, { onMessage: (event) => seen.push(event.data) });
    await agent.ready;
    expect(await agent.stub.increment()).toBe(1);
    await post(name, "broadcast", { type: "custom", value: 1 }, STATEFUL);
    await post(name, "broadcast-raw", "plain text", STATEFUL);
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen).toEqual([JSON.stringify({ type: "custom", value: 1 }), "plain text"]);
    unmount();
  });

  it("close() keeps it closed (status closed, the server sees the close); reconnect() opens again and sends what waited", async () => {
    const name = uniqueName("close");
    const closes: number[] = [];
    const { result: agent, unmount } = openCounter(name, { onClose: (event) => closes.push(event.code) });
    await agent.ready;
    const connect = await waitForLog(name, (entry) => entry.kind === "connect", { agent: STATEFUL });
    agent.close();
    expect(agent.status.value).toBe("closed");
    expect(closes).toEqual([1000]);
    await waitForLog(name, (entry) => entry.kind === "close" && entry.connectionId === connect.connectionId, { agent: STATEFUL });
    // As upstream: a call on a closed (not failed) client waits for the next open.
    // PartySocket warns about a send after close(); the call is buffered all the same.
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const waiting = agent.call("add", [1, 2]);
    agent.reconnect();
    expect(agent.status.value).toBe("connecting");
    expect(await waiting).toBe(3);
    warn.mockRestore();
    await agent.ready;
    expect(agent.status.value).toBe("open");
    expect(connectsOf(await readLog(name, STATEFUL))).toHaveLength(2);
    unmount();
  });

  it("unmounting the owner closes the socket", async () => {
    const name = uniqueName("owner-unmount");
    const { result: agent, unmount } = openCounter(name);
    await agent.ready;
    const connect = await waitForLog(name, (entry) => entry.kind === "connect", { agent: STATEFUL });
    unmount();
    expect(agent.status.value).toBe("closed");
    const closed = await waitForLog(name, (entry) => entry.kind === "close" && entry.connectionId === connect.connectionId, {
      agent: STATEFUL
    });
    expect(closed.code).toBe(1000);
  });

  it("a policy close (1008) is final: status closed, connectionError set, onConnectionError once, calls reject (rule 111)", async () => {
    const name = uniqueName("policy");
    const errors: Error[] = [];
    const { result: agent, unmount } = mountComposable(() =>
      useAgent({ agent: "PolicyRejectAgent", host: agentHost(), name, onConnectionError: (error) => errors.push(error) })
    );
    const early = rejectionOf(agent.call("anything", []));
    await vi.waitFor(() => expect(agent.status.value).toBe("closed"), { timeout: 15_000 });
    expect(agent.connectionError.value).toMatchObject({ code: 1008, reason: "not allowed" });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(agent.connectionError.value);
    expect(await early).toBe("Connection closed");
    await expect(agent.call("anything", [])).rejects.toThrowError("Connection closed");
    // Closed for good: no second attempt reached the server.
    expect(connectsOf(await readLog(name, "PolicyRejectAgent"))).toHaveLength(1);
    unmount();
  });

  it("a connection that cannot be made reports connectionError while it keeps retrying", async () => {
    const { result: agent, unmount } = mountComposable(() =>
      useAgent({ agent: STATEFUL, host: "127.0.0.1:9", name: uniqueName("unreachable"), maxRetries: 50 })
    );
    await vi.waitFor(() => expect(agent.connectionError.value?.message).toMatch(/Could not connect to agent StatefulAgent\/.*retrying/));
    expect(agent.status.value).toBe("connecting");
    unmount();
  });
});

describe("useAgentChat over useAgent's connection", () => {
  it("chats over the one shared socket; unmounting the chat leaves it open, unmounting the owner closes it", async () => {
    const name = uniqueName("shared");
    const { owner, chat } = openOwnerAndChat(name);
    await owner.result.ready;
    await chat.result;
    await chat.result.sendMessage({ text: "over the shared socket" });
    expect(chat.result.messages.value.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(chat.result.messages.value[1])).toBe(expectedText());

    const log = await readLog(name);
    const connects = connectsOf(log);
    expect(connects).toHaveLength(1);
    const connectionId = connects[0]!.connectionId;
    const request = log.find((entry) => entry.kind === "frame" && entry.type === "cf_agent_use_chat_request");
    expect(request?.connectionId).toBe(connectionId);

    chat.unmount();
    expect(owner.result.status.value).toBe("open");
    // Prove the socket still carries frames after the chat left: the server logs this one on the same connection.
    owner.result.client.value.send(JSON.stringify({ type: "test_still_open" }));
    await waitForLog(name, (entry) => entry.kind === "frame" && entry.type === "test_still_open" && entry.connectionId === connectionId);
    expect((await readLog(name)).filter((entry) => entry.kind === "close")).toEqual([]);
    expect(owner.result.status.value).toBe("open");

    owner.unmount();
    await waitForLog(name, (entry) => entry.kind === "close" && entry.connectionId === connectionId);
  });

  it("rotating the owner's token reconnects the shared socket and the chat keeps its messages", async () => {
    const name = uniqueName("shared-token");
    const query = ref({ token: "a" });
    const { owner, chat } = openOwnerAndChat(name, query);
    await chat.result;
    await chat.result.sendMessage({ text: "before the rotation" });
    const messages = chat.result.messages.value;
    expect(messages).toHaveLength(2);
    const client = owner.result.client.value;

    query.value = { token: "b" };
    await vi.waitFor(async () => expect(connectsOf(await readLog(name))).toHaveLength(2));
    await vi.waitFor(() => expect(chat.result.connectionStatus.value).toBe("open"));
    expect(owner.result.client.value).toBe(client);
    expect(client.url).toContain("token=b");
    expect(chat.result.messages.value.map((m) => m.id)).toEqual(messages.map((m) => m.id));

    await chat.result.sendMessage({ text: "after the rotation" });
    expect(chat.result.messages.value).toHaveLength(4);
    chat.unmount();
    owner.unmount();
  });

  it("a new name (and token) on the owner reads the new conversation's history, never the old one's (upstream #1874)", async () => {
    const first = uniqueName("history-a");
    const second = uniqueName("history-b");
    // The second conversation already has a history, written by another client.
    const writer = mountComposable(() => useAgentChat({ client: { agent: CHAT_AGENT, host: agentHost(), name: second } }));
    await writer.result;
    await writer.result.sendMessage({ text: "stored in the second conversation" });
    writer.unmount();

    const name = ref(first);
    const token = ref("token-a");
    const { owner, chat } = openOwnerAndChat(name, () => ({ token: token.value }));
    await chat.result;
    await chat.result.sendMessage({ text: "in the first conversation" });
    const readsOfFirst = (await readLog(first)).filter((entry) => entry.kind === "get-messages").length;

    name.value = second;
    token.value = "token-b";
    await vi.waitFor(() => expect(owner.result.identity.value?.name).toBe(second));
    await vi.waitFor(() => expect(chat.result.messages.value.map(textOf)).toEqual(["stored in the second conversation", expect.any(String)]));
    // A stock agent's history comes by a read of the new address. An ordered one (exact sync) sends it on connect: the
    // screen can show it before a read, or without one, so only the old address is checked below.
    const readsNeeded = CHAT_AGENT === STOCK_AGENT ? 1 : 0;
    await vi.waitFor(async () => expect((await readLog(second)).filter((entry) => entry.kind === "get-messages").length).toBeGreaterThanOrEqual(readsNeeded));
    expect(owner.result.client.value?.url).toContain("token=token-b");
    // The switch read nothing more of the first conversation.
    expect((await readLog(first)).filter((entry) => entry.kind === "get-messages")).toHaveLength(readsOfFirst);
    chat.unmount();
    owner.unmount();
  });

  // Upstream #929: requests go out on the socket the chat is on, never a stale one.
  it("a new name on the owner moves the shared chat to that conversation", async () => {
    const first = uniqueName("chat-a");
    const second = uniqueName("chat-b");
    const name = ref(first);
    const { owner, chat } = openOwnerAndChat(name);
    await chat.result;
    await chat.result.sendMessage({ text: "in the first conversation" });
    expect(chat.result.messages.value).toHaveLength(2);

    name.value = second;
    await vi.waitFor(() => expect(owner.result.identity.value?.name).toBe(second));
    await vi.waitFor(() => expect(chat.result.connectionStatus.value).toBe("open"));
    expect(chat.result.messages.value).toEqual([]);
    await chat.result.sendMessage({ text: "in the second conversation" });
    const secondLog = await readLog(second);
    expect(connectsOf(secondLog)).toHaveLength(1);
    expect(secondLog.filter((entry) => entry.type === "cf_agent_use_chat_request")).toHaveLength(1);
    expect((await readLog(first)).filter((entry) => entry.type === "cf_agent_use_chat_request")).toHaveLength(1);
    chat.unmount();
    owner.unmount();
  });
});
