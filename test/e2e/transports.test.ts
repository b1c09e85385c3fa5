/**
 * The socket options upstream's useAgent forwards to PartySocket and
 * AgentClient, end to end: the experimental `transport: "capnweb"` (against
 * `CapnwebRoom`, a plain Durable Object serving native callables, and
 * against an `Agent`, which serves none), the address options (`prefix`,
 * `id`, `protocol`, `protocols`, `WebSocket`), the reconnection policy
 * (`shouldReconnectOnClose`, `maxRetries`, reconnection delays), the other
 * PartySocket knobs and `disableNameValidation`, `debug`,
 * `enabled`, and the options that mean nothing here (`queryDeps`, …).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { nextTick, ref } from "vue";
import { type UseAgentOptions, useAgent, useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { CHAT_AGENT, agentHost, post, readLog, textOf, uniqueName, waitForLog } from "../support/e2e";
import { mountComposable } from "../support/mount";
import { whenSettled } from "../support/chat";

const ROOM = "CapnwebRoom";
const STATEFUL = "StatefulAgent";

interface RoomState {
  count: number;
}

/** A live stub of CapnwebRoom's counter (see test/fixtures/worker/src/capnweb-room.ts). */
interface CounterStub {
  increment(by?: number): Promise<number>;
}

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.restoreAllMocks();
});

function mount<T>(setup: () => T): T {
  const mounted = mountComposable(setup);
  cleanup.push(mounted.unmount);
  return mounted.result;
}

/** WebSocket URLs the page opened while `run` ran. */
async function openedUrls(run: () => Promise<void>): Promise<string[]> {
  const urls: string[] = [];
  const Native = globalThis.WebSocket;
  globalThis.WebSocket = class extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      urls.push(String(url));
    }
  };
  try {
    await run();
  } finally {
    globalThis.WebSocket = Native;
  }
  return urls;
}

describe('transport: "capnweb"', () => {
  it("a Cap'n Web session to a host with native callables: calls, stub, streams, live stubs, state", async () => {
    const name = uniqueName("room");
    let room!: ReturnType<typeof useAgent<unknown, RoomState>>;
    const urls = await openedUrls(async () => {
      room = mount(() => useAgent<unknown, RoomState>({ agent: ROOM, name, host: agentHost(), transport: "capnweb" }));
      await room.ready;
    });
    expect(urls).toHaveLength(1);
    expect(new URL(urls[0]!).searchParams.get("__agents_transport")).toBe("capnweb");
    expect(room.identity.value).toEqual({ agent: "capnweb-room", name });
    expect(room.state.value).toEqual({ count: 0 });

    expect(await room.call("add", [2, 3])).toBe(5);
    expect(await room.stub.add(4, 5)).toBe(9);
    await expect(room.call("fail", ["boom"])).rejects.toThrow("boom");
    const chunks: unknown[] = [];
    await room.call("countTo", [3], { stream: { onChunk: (chunk) => chunks.push(chunk) } });
    expect(chunks).toEqual([1, 2, 3]);
    // An RpcTarget result arrives as a live stub (only this transport can carry one).
    const counter = (await room.stub.counter()) as CounterStub;
    expect(await counter.increment(2)).toBe(2);
    await vi.waitFor(() => expect(room.state.value).toEqual({ count: 2 }));

    // State set over the Cap'n Web session reaches a client on the default transport.
    const plain = mount(() => useAgent<unknown, RoomState>({ agent: ROOM, name, host: agentHost() }));
    await plain.ready;
    room.setState({ count: 40 });
    await vi.waitFor(() => expect(plain.state.value).toEqual({ count: 40 }));
    // The same host over JSON frames: plain values work, a live stub cannot travel.
    expect(await plain.call("add", [1, 1])).toBe(2);
    await expect(plain.call("counter", [])).rejects.toThrow("only the capnweb transport can carry");
  });

  it("against an Agent, state and identity work and call() rejects saying why (Agents answer @callable only on cf-websocket)", async () => {
    const name = uniqueName("agent-capnweb");
    const agent = mount(() => useAgent({ agent: STATEFUL, name, host: agentHost(), transport: "capnweb" }));
    await agent.ready;
    expect(agent.identity.value).toEqual({ agent: "stateful-agent", name });
    expect(agent.state.value).toEqual({ count: 0, label: "initial" });
    const error = await agent.call("add", [2, 3]).then(
      () => undefined,
      (reason: Error) => reason
    );
    expect(error?.message).toMatch(/call\("add"\) over transport "capnweb" failed: the host serves no native callable "add"/);
    expect(error?.message).toMatch(/WebSockets\(\{ callables \}\)/);
    expect((error?.cause as Error | undefined)?.message).toMatch(/is not a function/);
    // setState travels as a protocol frame through the session.
    agent.setState({ count: 3, label: "over capnweb" });
    const frame = await waitForLog(name, (entry) => entry.kind === "frame" && entry.type === "cf_agent_state", { agent: STATEFUL });
    expect(frame.state).toEqual({ count: 3, label: "over capnweb" });
  });

  it("useAgentChat's client options forward it too: a chat turn over a Cap'n Web session", async () => {
    const name = uniqueName("chat-capnweb");
    const chat = mount(() => useAgentChat({ client: { agent: CHAT_AGENT, name, host: agentHost(), transport: "capnweb" } }));
    await chat.sendMessage({ text: "over capnweb" });
    await whenSettled(chat);
    expect(textOf(chat.messages.value.at(-1))).toBe(expectedText());
    const connect = await waitForLog(name, (entry) => entry.kind === "connect");
    expect(connect.queryKeys).toContain("__agents_transport");
  });
});

describe("address options", () => {
  it("prefix, id, protocol, protocols and WebSocket reach the socket and the server", async () => {
    const name = uniqueName("addressed");
    let made = 0;
    class CountingWebSocket extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        made++;
      }
    }
    const agent = mount(() =>
      useAgent({
        agent: STATEFUL,
        name,
        host: agentHost(),
        prefix: "rooms",
        id: `fixed-${name}`,
        protocol: "ws",
        protocols: ["agents-vue.v1"],
        WebSocket: CountingWebSocket
      })
    );
    await agent.ready;
    expect(made).toBe(1);
    expect(agent.client.value.protocol).toBe("agents-vue.v1");
    const connect = await waitForLog(name, (entry) => entry.kind === "connect", { agent: STATEFUL });
    expect(connect.path).toBe(`/rooms/stateful-agent/${name}`);
    expect(connect.connectionId).toBe(`fixed-${name}`);
    expect(await agent.call("add", [20, 22])).toBe(42);
  });
});

/**
 * Resets the agent: its sockets drop at once with 1006 (a clean server close
 * takes wrangler dev's proxy ten seconds to pass on).
 */
async function dropFromServer(name: string): Promise<void> {
  expect((await post(name, "crash", {}, STATEFUL)).ok).toBe(true);
}

describe("socket tuning", () => {
  it("PartySocket's knobs reach it unchanged; disableNameValidation silences its warning about a slash in a name", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const tuned = mount(() =>
      useAgent({
        agent: STATEFUL,
        name: "with/slash",
        host: agentHost(),
        startClosed: true,
        connectionTimeout: 1234,
        maxEnqueuedMessages: 7,
        reconnectionDelayGrowFactor: 1.5,
        minUptime: 100
      })
    );
    // PartySocket keeps the options it was given on the socket.
    const options = Reflect.get(tuned.client.value, "_options") as Record<string, unknown>;
    expect(options).toMatchObject({ connectionTimeout: 1234, maxEnqueuedMessages: 7, reconnectionDelayGrowFactor: 1.5, minUptime: 100 });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/room name "with\/slash" contains forward slash/));
    warn.mockClear();
    mount(() => useAgent({ agent: STATEFUL, name: "with/slash", host: agentHost(), startClosed: true, disableNameValidation: true }));
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("reconnection policy", () => {
  it("shouldReconnectOnClose returning false makes a server close final: closed, connectionError, onConnectionError", async () => {
    const name = uniqueName("no-reconnect");
    const onConnectionError = vi.fn();
    const asked: number[] = [];
    const agent = mount(() =>
      useAgent({
        agent: STATEFUL,
        name,
        host: agentHost(),
        onConnectionError,
        shouldReconnectOnClose: (event) => {
          asked.push(event.code);
          return false;
        }
      })
    );
    await agent.ready;
    await dropFromServer(name);
    await vi.waitFor(() => expect(agent.status.value).toBe("closed"));
    expect(asked).toEqual([1006]);
    expect(onConnectionError).toHaveBeenCalledTimes(1);
    expect(agent.connectionError.value?.message).toMatch(/Agent connection closed/);
  });

  it("maxRetries: 0 gives up after the first close; reconnection delays set how soon a reconnect comes", async () => {
    const spent = uniqueName("max-retries");
    const once = mount(() => useAgent({ agent: STATEFUL, name: spent, host: agentHost(), maxRetries: 0 }));
    await once.ready;
    await dropFromServer(spent);
    await vi.waitFor(() => expect(once.status.value).toBe("closed"));
    expect(once.connectionError.value).not.toBeNull();

    const quick = uniqueName("quick");
    const fast = mount(() =>
      useAgent({ agent: STATEFUL, name: quick, host: agentHost(), minReconnectionDelay: 50, maxReconnectionDelay: 50 })
    );
    await fast.ready;
    await dropFromServer(quick);
    await vi.waitFor(async () => {
      const connects = (await readLog(quick, STATEFUL)).filter((entry) => entry.kind === "connect");
      expect(connects).toHaveLength(2);
    });
    const log = await readLog(quick, STATEFUL);
    const closedAt = log.find((entry) => entry.kind === "crash")!.at;
    const reconnectedAt = log.filter((entry) => entry.kind === "connect")[1]!.at;
    // PartySocket's default first delay is at least a second.
    expect(reconnectedAt - closedAt).toBeLessThan(900);
  });

  it("debug sends PartySocket's trace to debugLogger", async () => {
    const lines: unknown[][] = [];
    const agent = mount(() =>
      useAgent({ agent: STATEFUL, name: uniqueName("debug"), host: agentHost(), debug: true, debugLogger: (...args) => lines.push(args) })
    );
    await agent.ready;
    expect(lines.some((line) => line.includes("connect"))).toBe(true);
  });
});

describe("enabled", () => {
  it("false closes the socket and keeps it closed; true connects again; close() wins over enabled", async () => {
    const name = uniqueName("enabled");
    const enabled = ref(true);
    const agent = mount(() => useAgent({ agent: STATEFUL, name, host: agentHost(), enabled }));
    await agent.ready;
    enabled.value = false;
    await nextTick();
    expect(agent.status.value).toBe("closed");
    await waitForLog(name, (entry) => entry.kind === "close", { agent: STATEFUL });
    agent.reconnect(); // the connection follows `enabled` while it is false
    expect(agent.status.value).toBe("closed");

    enabled.value = true;
    await nextTick();
    await vi.waitFor(() => expect(agent.status.value).toBe("open"));
    expect(await agent.call("add", [1, 2])).toBe(3);

    agent.close();
    enabled.value = false;
    await nextTick();
    enabled.value = true;
    await nextTick();
    expect(agent.status.value).toBe("closed");
    const connects = (await readLog(name, STATEFUL)).filter((entry) => entry.kind === "connect");
    expect(connects).toHaveLength(2);
  });

  it("enabled: false from the start connects nothing until it turns true", async () => {
    const name = uniqueName("disabled");
    const enabled = ref(false);
    const agent = mount(() => useAgent({ agent: STATEFUL, name, host: agentHost(), enabled }));
    expect(agent.status.value).toBe("closed");
    enabled.value = true;
    await nextTick();
    await agent.ready;
    expect(agent.status.value).toBe("open");
  });
});

describe("options upstream's hook has and this one ignores", () => {
  it("queryDeps, cacheTtl and transferEnqueuedMessages each warn once, naming the option and why", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const options = { agent: STATEFUL, name: uniqueName("ignored"), host: agentHost(), queryDeps: [1], cacheTtl: 10, transferEnqueuedMessages: true };
    const agent = mount(() => useAgent(options as UseAgentOptions));
    await agent.ready;
    const messages = warn.mock.calls.map(([message]) => String(message));
    expect(messages.filter((message) => message.startsWith("[agents-vue] useAgent ignores"))).toEqual([
      expect.stringMatching(/`queryDeps`: it keys React's cache/),
      expect.stringMatching(/`cacheTtl`: it expires React's cache/),
      expect.stringMatching(/`transferEnqueuedMessages`: the socket is kept/)
    ]);
  });
});
