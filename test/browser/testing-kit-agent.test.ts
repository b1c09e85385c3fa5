/**
 * `agents-vue/testing` with `useAgent` in the browser (Vitest browser mode):
 * the same component and scenario as the Node test, mounted in the DOM and
 * clicked, `useAgent` opening its sockets through `createTestAgent().WebSocket`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "vue";
import { CounterPanel, counterAgent, runAgentScenario } from "../support/testing-kit-agent";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("agents-vue/testing with useAgent in the browser", () => {
  it("shows the agent's identity and state, round-trips setState, answers callables (plain, streaming, failing, unknown) and chats on the same socket", async () => {
    const agent = counterAgent();
    const host = document.createElement("div");
    document.body.appendChild(host);
    const app = createApp(CounterPanel, { WebSocket: agent.WebSocket });
    app.mount(host);
    cleanups.push(() => app.unmount(), () => host.remove(), () => agent.dispose());
    const all = (testId: string) => Array.from(host.querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`));
    await runAgentScenario(agent, {
      text: (testId) => all(testId).map((element) => element.textContent ?? "").join(""),
      texts: (testId) => all(testId).map((element) => element.textContent ?? ""),
      click: (testId) => {
        const [button] = all(testId);
        expect(button, `a ${testId} button`).toBeDefined();
        button!.click();
      }
    });
  });
});
