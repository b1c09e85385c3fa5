import { expect } from "vitest";
import { type PropType, defineComponent, h, shallowRef } from "vue";
import { useAgent, useAgentChat } from "../../src";
import { type TestAgent, createTestAgent } from "../../src/testing";
import type { Page } from "./testing-kit";

/**
 * The testing kit with `useAgent`, run by a Node test and a browser test: a
 * component that shows an agent's state and identity, sets state, calls
 * `@callable` methods (a plain one, a streaming one, one that sets state, an
 * unknown one), and chats over the same connection.
 */

export interface Counter {
  count: number;
}

/** The kit's agent for the scenario: a counter with callables, and one chat reply. */
export function counterAgent(): TestAgent<Counter> {
  return createTestAgent({
    state: { count: 1 },
    replies: ["Hello from the agent"],
    methods: {
      add(a: number, b: number) {
        return a + b;
      },
      async reset() {
        this.setState({ count: 0 });
        return `reset from ${this.state.count}`;
      },
      fail() {
        throw new Error("The agent refused");
      }
    },
    streaming: {
      countTo(stream, to: number) {
        for (let n = 1; n <= to; n++) stream.send(n);
        stream.end("done");
      }
    }
  });
}

const button = (testId: string, onClick: () => void) => h("button", { "data-testid": testId, onClick }, testId);

/**
 * A component as an app would write one, with the WebSocket constructor as a prop (the app leaves it out).
 * `Function` goes through `unknown`: Vue 3.3's `PropType` does not accept a constructor with static fields.
 */
export const CounterPanel = defineComponent({
  props: { WebSocket: { type: Function as unknown as PropType<typeof WebSocket>, required: false } },
  setup(props) {
    const agent = useAgent<Counter>({ agent: "CounterAgent", name: "room-1", host: "counter.test", WebSocket: props.WebSocket });
    const chat = useAgentChat({ agent, throttle: false });
    const result = shallowRef("");
    const error = shallowRef("");
    const chunks = shallowRef<unknown[]>([]);
    const call = (method: string, args: unknown[]) =>
      agent.call(method, args).then(
        (value) => (result.value = String(value)),
        (failure: unknown) => (error.value = failure instanceof Error ? failure.message : String(failure))
      );
    const stream = () =>
      void agent.call("countTo", [3], {
        stream: { onChunk: (chunk) => (chunks.value = [...chunks.value, chunk]), onDone: (last) => (chunks.value = [...chunks.value, last]) }
      });
    return () =>
      h("div", [
        h("p", { "data-testid": "status" }, agent.status.value),
        h("p", { "data-testid": "identity" }, agent.identity.value ? `${agent.identity.value.agent}/${agent.identity.value.name}` : ""),
        h("p", { "data-testid": "count" }, String(agent.state.value?.count ?? "")),
        h("p", { "data-testid": "result" }, result.value),
        h("p", { "data-testid": "error" }, error.value),
        h("p", { "data-testid": "chunks" }, chunks.value.join(",")),
        h("ul", chat.messages.value.map((message) => h("li", { key: message.id, "data-testid": `message-${message.role}` }, message.parts.map((part) => (part.type === "text" ? part.text : "")).join("")))),
        button("increment", () => agent.setState({ count: (agent.state.value?.count ?? 0) + 1 })),
        button("add", () => void call("add", [2, 3])),
        button("reset", () => void call("reset", [])),
        button("fail", () => void call("fail", [])),
        button("missing", () => void call("missing", [])),
        button("stream", stream),
        button("send", () => void chat.sendMessage({ text: "Hi" }))
      ]);
  }
});

/** The scenario: whatever mounted `CounterPanel` with `agent.WebSocket`, this is what the user sees. */
export async function runAgentScenario(agent: TestAgent<Counter>, page: Page): Promise<void> {
  await agent.settled();
  expect(page.text("status")).toBe("open");
  expect(page.text("identity")).toBe("counter-agent/room-1");
  expect(page.text("count")).toBe("1");
  expect(agent.delivered.map((frame) => frame.type).slice(0, 3)).toEqual(["cf_agent_identity", "cf_agent_state", "cf_agent_mcp_servers"]);

  // The client's setState reaches the agent (and is not echoed back).
  page.click("increment");
  await agent.settled();
  expect(page.text("count")).toBe("2");
  expect(agent.state).toEqual({ count: 2 });
  expect(agent.received.filter((frame) => frame.type === "cf_agent_state")).toEqual([{ type: "cf_agent_state", state: { count: 2 } }]);

  // The agent's own setState is broadcast.
  agent.setState({ count: 10 });
  await agent.settled();
  expect(page.text("count")).toBe("10");

  page.click("add");
  await agent.settled();
  expect(page.text("result")).toBe("5");

  page.click("reset");
  await agent.settled();
  expect(page.text("result")).toBe("reset from 0");
  expect(page.text("count")).toBe("0");

  page.click("fail");
  await agent.settled();
  expect(page.text("error")).toBe("The agent refused");

  page.click("missing");
  await agent.settled();
  expect(page.text("error")).toBe("Method missing does not exist");

  page.click("stream");
  await agent.settled();
  expect(page.text("chunks")).toBe("1,2,3,done");

  // A chat on the same useAgent talks to the same agent.
  page.click("send");
  await agent.settled();
  expect(page.texts("message-user")).toEqual(["Hi"]);
  expect(page.texts("message-assistant")).toEqual(["Hello from the agent"]);
  expect(agent.transcript.map((message) => message.role)).toEqual(["user", "assistant"]);
}
