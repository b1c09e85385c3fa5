/**
 * `agents-vue/testing` in Node: a component mounted with Vue's renderer over
 * an object tree (no DOM) against `createTestAgent()`.
 */
import { resolve } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, expect, it, vi } from "vitest";
import { effectScope } from "vue";
import { useAgentChat } from "../../src";
import { createTestAgent, type Reply } from "../../src/testing";
import { pageInNode } from "../support/node-renderer";
import { ChatPanel, runScenario, scenarioAgent } from "../support/testing-kit";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("agents-vue/testing in Node", () => {
  it("drives a chat component: send, stream, client tool, approval, error, stop, dropped socket and resume, another tab", async () => {
    const agent = scenarioAgent();
    const { page, unmount } = pageInNode(ChatPanel, { agent: agent.socket });
    cleanups.push(unmount, () => agent.dispose());
    await runScenario(agent, page);
  });
});

describe("agents-vue/testing: a reply of the wrong shape", () => {
  it("fails its turn with a warning naming the problem, so the chat ends in error instead of waiting for good", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const agent = createTestAgent({ replies: [{ text: "not a step list" } as unknown as Reply, [{ type: "txt", text: "typo" } as never], "fine"] });
    const scope = effectScope();
    const chat = scope.run(() => useAgentChat({ agent: agent.socket, throttle: false }))!;
    cleanups.push(() => scope.stop(), () => agent.dispose(), () => warn.mockRestore());
    for (const [text, problem] of [["one", "a reply must be a string or a list of steps"], ["two", "a reply step must have a known type"]] as const) {
      await chat.sendMessage({ text });
      await agent.settled();
      expect(chat.status.value).toBe("error");
      expect(warn.mock.calls.some((call) => String(call[0]).includes(problem))).toBe(true);
    }
    chat.clearError();
    await chat.sendMessage({ text: "three" });
    await agent.settled();
    expect(chat.status.value).toBe("ready");
    expect(chat.messages.value.at(-1)?.parts).toContainEqual(expect.objectContaining({ type: "text", text: "fine" }));
  });
});

describe("agents-vue/testing stays out of apps", () => {
  it("is not reached from the main entry: a bundle of agents-vue holds none of it", async () => {
    const entry = resolve(import.meta.dirname, "../../src/index.ts");
    const result = await build({
      stdin: { contents: `export * from ${JSON.stringify(entry)};`, resolveDir: resolve(import.meta.dirname, "../.."), loader: "ts" },
      bundle: true,
      write: false,
      format: "esm",
      metafile: true,
      plugins: [{ name: "packages-external", setup: (plugin) => void plugin.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true })) }]
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.startsWith("src/core/"))).toBe(true);
    expect(inputs.filter((path) => path.startsWith("src/testing/"))).toEqual([]);
    expect(result.outputFiles[0]!.text).not.toContain("agents-vue/testing");
  });
});
