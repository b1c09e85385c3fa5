import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import { build as tsdown } from "tsdown";
import { build, type Rolldown } from "vite";
import { describe, expect, it } from "vitest";

const entry = fileURLToPath(new URL("../../src/index.ts", import.meta.url));

/** The library as an app's Vite build bundles it for `NODE_ENV`, minified, peers left as imports. */
async function bundle(nodeEnv: "production" | "development"): Promise<string> {
  const result = (await build({
    configFile: false,
    logLevel: "silent",
    mode: nodeEnv,
    define: { "process.env.NODE_ENV": JSON.stringify(nodeEnv) },
    build: {
      write: false,
      minify: true,
      rollupOptions: {
        input: entry,
        preserveEntrySignatures: "strict",
        external: (id) => /^(vue|ai|agents|@ai-sdk|nanoid|partysocket)($|\/)/.test(id)
      }
    }
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
  const outputs = Array.isArray(result) ? result : [result];
  return outputs
    .flatMap((output) => output.output)
    .map((file) => (file.type === "chunk" ? file.code : ""))
    .join("\n");
}

// Diagnostics for the developer: dropped from production builds.
const developerOnly = [
  "[agents-vue] Deprecated: ",
  "toolsRequiringConfirmation' option",
  "addToolResult(); use addToolOutput()",
  "was called outside a component setup or effectScope()",
  "uses the deprecated 'inputSchema'",
  "setMessages needs an array of messages",
  "mergeMessages must return an array of messages"
];

// What a user must know about: kept in production.
const kept = [
  "Could not load the transcript of",
  "were not sent: the chat closed before the connection came back",
  "no tool part awaits approval",
  "Failed to apply a chat frame",
  "opens a WebSocket and runs only in the browser",
  "injectAgentChat() found no chat"
];

// Development adds these hints to a message production keeps in a short form.
const developerHints = [
  "Render the component that calls it inside <ClientOnly>",
  "`client` (where to connect) or `agent` (a connection)",
  "(the `agent` option is empty)",
  "call provideAgentChat() in a parent component's setup()",
  "its URL segment is empty",
  "the reserved separator",
  "it keys React's cache of an async query",
  "Server-side routing (basePath) may pick the instance per session",
  "an Agent's @callable() methods answer only",
  "binds it as a Durable Object",
  "Check the credentials in `query`",
  "and the worker's logs"
];

// The short production forms of those messages.
const shortForms = [
  "runs only in the browser.",
  "useAgentChat needs `client` or `agent`.",
  "The chat has no connection yet.",
  "lacks \"agent\" or \"name\".",
  "useAgent ignores",
  "instead of",
  "the host serves no native callable",
  ", not a WebSocket"
];

describe("developer diagnostics", () => {
  it("are in a development build and absent from a production build, where what a user must know stays", async () => {
    const [development, production] = await Promise.all([bundle("development"), bundle("production")]);
    expect(production).not.toContain("process.env.NODE_ENV");
    for (const text of developerOnly) {
      expect(development, `development build: ${text}`).toContain(text);
      expect(production, `production build: ${text}`).not.toContain(text);
    }
    for (const text of kept) {
      expect(development, `development build: ${text}`).toContain(text);
      expect(production, `production build: ${text}`).toContain(text);
    }
    expect(production.length).toBeLessThan(development.length);
  }, 60_000);

  it("are absent from an esbuild production build of the published files too", async () => {
    // esbuild folds `process.env.NODE_ENV` but does not inline a constant from a chunk that imports a peer:
    // a guard shared through one exported flag kept every message in an esbuild app, so this bundles the built package.
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const outDir = mkdtempSync(join(tmpdir(), "agents-vue-dist-"));
    try {
      await tsdown({ cwd: root, outDir, dts: false, sourcemap: false, logLevel: "silent" });
      const bundleBuilt = async (nodeEnv: "production" | "development") => {
        const result = await esbuild({
          stdin: { contents: `export * from ${JSON.stringify(join(outDir, "index.js"))};`, resolveDir: outDir, loader: "js" },
          bundle: true,
          write: false,
          minify: true,
          format: "esm",
          logLevel: "silent",
          define: { "process.env.NODE_ENV": JSON.stringify(nodeEnv) },
          external: ["vue", "ai", "agents", "agents/*", "@ai-sdk/*", "nanoid", "partysocket"]
        });
        return result.outputFiles[0]!.text;
      };
      const [development, production] = await Promise.all([bundleBuilt("development"), bundleBuilt("production")]);
      // Booleans, not toContain: a failure names the text without printing the whole bundle.
      expect(production.includes("process.env.NODE_ENV"), "production build keeps process.env.NODE_ENV").toBe(false);
      for (const text of developerOnly) {
        expect(development.includes(text), `development build: ${text}`).toBe(true);
        expect(production.includes(text), `production build: ${text}`).toBe(false);
      }
      for (const text of kept) expect(production.includes(text), `production build: ${text}`).toBe(true);
      for (const text of developerHints) {
        expect(development.includes(text), `development build: ${text}`).toBe(true);
        expect(production.includes(text), `production build: ${text}`).toBe(false);
      }
      for (const text of shortForms) expect(production.includes(text), `production build: ${text}`).toBe(true);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("give a short form in production where development explains more", async () => {
    const [development, production] = await Promise.all([bundle("development"), bundle("production")]);
    for (const text of developerHints) {
      expect(development.includes(text), `development build: ${text}`).toBe(true);
      expect(production.includes(text), `production build: ${text}`).toBe(false);
    }
    for (const text of shortForms) expect(production.includes(text), `production build: ${text}`).toBe(true);
  }, 60_000);
});
