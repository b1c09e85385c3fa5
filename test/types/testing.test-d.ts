import { describe, expectTypeOf, it } from "vitest";
import type { UIMessage } from "ai";
import { createTestAgent } from "../../src/testing";

describe("createTestAgent for useAgent", () => {
  it("types the state from `state`, and `this` in methods as the agent", () => {
    const agent = createTestAgent({
      state: { count: 0 },
      methods: {
        increment(by: number) {
          expectTypeOf(this.state).toEqualTypeOf<{ count: number }>();
          this.setState({ count: this.state.count + by });
          // @ts-expect-error the state has no `label`
          this.setState({ label: "x" });
          return this.state.count;
        }
      },
      streaming: {
        countTo(stream, to: number) {
          stream.send(to);
          stream.end();
        }
      }
    });
    expectTypeOf(agent.state).toEqualTypeOf<{ count: number }>();
    expectTypeOf(agent.WebSocket).toEqualTypeOf<typeof WebSocket>();
    // @ts-expect-error setState takes the agent's state type
    agent.setState({ count: "1" });
  });

  it("takes `ordered` as a boolean", () => {
    expectTypeOf(createTestAgent({ ordered: true, messages: [] }).transcript).toEqualTypeOf<UIMessage[]>();
    // @ts-expect-error `ordered` is a boolean
    createTestAgent({ ordered: "yes" });
  });
});
