/**
 * `agents-vue/testing` with `useAgent` in Node: a component mounted with
 * Vue's renderer over an object tree, its `useAgent` opening its sockets
 * through `createTestAgent().WebSocket`. `useAgent` refuses to run where
 * there is no `window` (server-side rendering), so the test gives Node one,
 * as a DOM environment (jsdom, happy-dom) would.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { useAgent } from "../../src";
import { createTestAgent } from "../../src/testing";
import { findAll, mountInNode, pageInNode, textOf } from "../support/node-renderer";
import { CounterPanel, counterAgent, runAgentScenario } from "../support/testing-kit-agent";
import { effectScope } from "vue";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.unstubAllGlobals();
});

describe("agents-vue/testing with useAgent in Node", () => {
  it("shows the agent's identity and state, round-trips setState, answers callables (plain, streaming, failing, unknown) and chats on the same socket", async () => {
    vi.stubGlobal("window", globalThis);
    const agent = counterAgent();
    const { page, unmount } = pageInNode(CounterPanel, { WebSocket: agent.WebSocket });
    cleanups.push(unmount, () => agent.dispose());
    await runAgentScenario(agent, page);
  });

  it("reaches a component that opens its socket with the global WebSocket (the Testing guide's way: vi.stubGlobal)", async () => {
    vi.stubGlobal("window", globalThis);
    const agent = counterAgent();
    vi.stubGlobal("WebSocket", agent.WebSocket);
    const { root, unmount } = mountInNode(CounterPanel);
    cleanups.push(unmount, () => agent.dispose());
    await agent.settled();
    expect(findAll(root, "data-testid", "identity").map(textOf)).toEqual(["counter-agent/room-1"]);
    expect(findAll(root, "data-testid", "count").map(textOf)).toEqual(["1"]);
  });

  it("answers a readonly agent's refusal with onStateUpdateError, and sends no state when it has none", async () => {
    vi.stubGlobal("window", globalThis);
    const agent = createTestAgent<{ mode: string } | undefined>({ readonly: true });
    const errors: string[] = [];
    const scope = effectScope();
    const client = scope.run(() =>
      useAgent<{ mode: string }>({ agent: "ReadOnly", host: "readonly.test", WebSocket: agent.WebSocket, onStateUpdateError: (error) => errors.push(error) })
    )!;
    cleanups.push(() => scope.stop(), () => agent.dispose());
    await client.ready;
    await agent.settled();
    expect(agent.delivered.map((frame) => frame.type)).toEqual(["cf_agent_identity", "cf_agent_mcp_servers"]);
    expect(agent.delivered[0]).toEqual({ type: "cf_agent_identity", agent: "read-only", name: "default" });
    client.setState({ mode: "edit" });
    await agent.settled();
    expect(errors).toEqual(["Connection is readonly"]);
    expect(agent.state).toBeUndefined();
  });

  it("drop(): useAgent's socket reconnects on its own, and the agent sends its identity and current state again", async () => {
    vi.stubGlobal("window", globalThis);
    const agent = createTestAgent({ state: { count: 1 } });
    const scope = effectScope();
    const client = scope.run(() =>
      useAgent<{ count: number }>({ agent: "CounterAgent", host: "counter.test", WebSocket: agent.WebSocket, minReconnectionDelay: 10, maxReconnectionDelay: 10 })
    )!;
    cleanups.push(() => scope.stop(), () => agent.dispose());
    await agent.settled();
    expect(client.status.value).toBe("open");
    agent.drop();
    expect(client.status.value).toBe("connecting");
    agent.setState({ count: 7 }); // changed while the client is away
    await vi.waitFor(() => expect(client.status.value).toBe("open"));
    await agent.settled();
    expect(client.state.value).toEqual({ count: 7 });
    expect(agent.delivered.filter((frame) => frame.type === "cf_agent_identity")).toHaveLength(2);
  });
});
