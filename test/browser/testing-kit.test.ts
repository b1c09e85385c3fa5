/**
 * `agents-vue/testing` in the browser (Vitest browser mode): the same
 * component and scenario as the Node test, mounted in the DOM and clicked.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "vue";
import { ChatPanel, runScenario, scenarioAgent } from "../support/testing-kit";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("agents-vue/testing in the browser", () => {
  it("drives a chat component: send, stream, client tool, approval, error, stop, dropped socket and resume, another tab", async () => {
    const agent = scenarioAgent();
    const host = document.createElement("div");
    document.body.appendChild(host);
    const app = createApp(ChatPanel, { agent: agent.socket });
    app.mount(host);
    cleanups.push(() => app.unmount(), () => host.remove(), () => agent.dispose());
    const all = (testId: string) => Array.from(host.querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`));
    await runScenario(agent, {
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
