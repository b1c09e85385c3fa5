/**
 * `agents-vue/testing` in the browser (Vitest browser mode): the same
 * components and scenarios as the Node tests, mounted in the DOM and clicked;
 * `useAgent` opens its sockets through `createTestAgent().WebSocket`.
 */
import { afterEach, describe, it } from "vitest";
import { pageInDom } from "../support/dom-page";
import { ChatPanel, runScenario, scenarioAgent } from "../support/testing-kit";
import { CounterPanel, counterAgent, runAgentScenario } from "../support/testing-kit-agent";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("agents-vue/testing in the browser", () => {
  it("drives a chat component: send, stream, client tool, approval, error, stop, dropped socket and resume, another tab", async () => {
    const agent = scenarioAgent();
    const { page, unmount } = pageInDom(ChatPanel, { agent: agent.socket });
    cleanups.push(unmount, () => agent.dispose());
    await runScenario(agent, page);
  });

  it("with useAgent: shows the agent's identity and state, round-trips setState, answers callables (plain, streaming, failing, unknown) and chats on the same socket", async () => {
    const agent = counterAgent();
    const { page, unmount } = pageInDom(CounterPanel, { WebSocket: agent.WebSocket });
    cleanups.push(unmount, () => agent.dispose());
    await runAgentScenario(agent, page);
  });
});
