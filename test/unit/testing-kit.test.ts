/**
 * `agents-vue/testing` in Node: a component mounted with Vue's renderer over
 * an object tree (no DOM) against `createTestAgent()`.
 */
import { resolve } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
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
