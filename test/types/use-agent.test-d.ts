import type { StreamingResponse } from "agents";
import type { AgentClient } from "agents/client";
import { describe, expectTypeOf, it } from "vitest";
import type { ShallowRef } from "vue";
import {
  type AgentIdentity,
  type AgentSocket,
  type ConnectionStatus,
  type SharedAgentConnection,
  type UseAgentReturn,
  useAgent,
  useAgentChat
} from "../../src";

interface CounterState {
  count: number;
  label: string;
}

/** The client-visible shape of the fixture's StatefulAgent (the worker module itself pulls worker-only types). */
declare class CounterAgent {
  get state(): CounterState;
  add(a: number, b: number): number;
  fail(message: string): never;
  increment(): number;
  countTo(stream: StreamingResponse, n: number, delayMs?: number): Promise<void>;
  slow(ms: number, value?: string): Promise<string | number>;
}

describe("useAgent<AgentT, State>", () => {
  it("types state and setState from the agent class's state getter", () => {
    const agent = useAgent<CounterAgent>({ agent: "StatefulAgent" });
    expectTypeOf(agent.state.value).toEqualTypeOf<CounterState | undefined>();
    expectTypeOf(agent.setState).parameter(0).toEqualTypeOf<CounterState>();
    // @ts-expect-error: count must be a number
    agent.setState({ count: "1", label: "x" });
  });

  it("types stub methods: parameters (without the StreamingResponse) and promised results", () => {
    const { stub } = useAgent<CounterAgent, CounterState>({ agent: "StatefulAgent" });
    expectTypeOf(stub.add).parameters.toEqualTypeOf<[a: number, b: number]>();
    expectTypeOf(stub.add(1, 2)).toEqualTypeOf<Promise<number>>();
    expectTypeOf(stub.increment()).toEqualTypeOf<Promise<number>>();
    expectTypeOf(stub.countTo).parameters.toEqualTypeOf<[n: number, delayMs?: number]>();
    expectTypeOf(stub.slow(5)).toEqualTypeOf<Promise<string | number>>();
    // @ts-expect-error: no such callable
    void stub.nope;
    // @ts-expect-error: wrong argument type
    void stub.add("1", 2);
  });

  it("types call by method name, with required and optional arguments", () => {
    const { call } = useAgent<CounterAgent, CounterState>({ agent: "StatefulAgent" });
    expectTypeOf(call("add", [1, 2])).toEqualTypeOf<Promise<number>>();
    expectTypeOf(call("increment")).toEqualTypeOf<Promise<number>>();
    void call("countTo", [3], { stream: { onChunk: (chunk) => expectTypeOf(chunk).toBeUnknown() } });
    // @ts-expect-error: add needs its arguments
    void call("add");
    // @ts-expect-error: unknown method
    void call("nope", []);
  });

  it("with only a state type, types state and leaves calls untyped", () => {
    const agent = useAgent<CounterState>({ agent: "StatefulAgent" });
    expectTypeOf(agent.state.value).toEqualTypeOf<CounterState | undefined>();
    expectTypeOf(agent.call<number>("anything", [1])).toEqualTypeOf<Promise<number>>();
  });

  it("returns read-only shallow refs and the AgentClient", () => {
    const agent = useAgent<CounterAgent>({ agent: "StatefulAgent", name: () => "n" });
    expectTypeOf(agent).toEqualTypeOf<UseAgentReturn<CounterAgent, CounterState>>();
    expectTypeOf(agent.client).toEqualTypeOf<Readonly<ShallowRef<AgentClient<CounterAgent, CounterState>>>>();
    expectTypeOf(agent.status.value).toEqualTypeOf<ConnectionStatus>();
    expectTypeOf(agent.identity.value).toEqualTypeOf<AgentIdentity | null>();
    expectTypeOf(agent.ready).toEqualTypeOf<Promise<void>>();
    // @ts-expect-error: read-only to the caller
    agent.state.value = { count: 1, label: "x" };
  });

  it("types onStateUpdate with the state type", () => {
    useAgent<CounterAgent>({
      agent: "StatefulAgent",
      onStateUpdate: (state, source) => {
        expectTypeOf(state).toEqualTypeOf<CounterState>();
        expectTypeOf(source).toEqualTypeOf<"server" | "client">();
      }
    });
  });

  it("is accepted as useAgentChat's shared connection", () => {
    const connection = useAgent<CounterAgent>({ agent: "ScriptedChatAgent" });
    expectTypeOf(connection).toExtend<SharedAgentConnection>();
    expectTypeOf(connection.client.value).toExtend<AgentSocket>();
    useAgentChat({ agent: connection });
  });
});
