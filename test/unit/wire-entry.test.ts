/**
 * `agents-vue/wire` (src/wire/index.ts) costs a client nothing: bundled with
 * every package import left external, it imports nothing, and a bundle that
 * takes one name holds that string and none of the others.
 */
import { resolve } from "node:path";
import { build, type Plugin } from "esbuild";
import { describe, expect, it } from "vitest";
import * as wire from "../../src/wire";
import * as server from "../../src/server";

const entry = resolve(import.meta.dirname, "../../src/wire/index.ts");

/** Leaves every bare import external, so the bundle shows what the module imports. */
const packagesExternal: Plugin = {
  name: "packages-external",
  setup(plugin) {
    plugin.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
  }
};

async function bundle(contents: string) {
  const result = await build({
    stdin: { contents, resolveDir: resolve(import.meta.dirname, "../.."), loader: "ts" },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    metafile: true,
    plugins: [packagesExternal]
  });
  const [output] = Object.values(result.metafile.outputs);
  return { code: result.outputFiles[0]!.text, imports: output!.imports };
}

describe("agents-vue/wire", () => {
  it("imports nothing, and all of it is a few hundred bytes", async () => {
    const { code, imports } = await bundle(`export * from ${JSON.stringify(entry)};`);
    expect(imports).toEqual([]);
    expect(code).not.toMatch(/\bimport\b/);
    expect(Buffer.byteLength(code)).toBeLessThan(600);
  });

  it("gives a bundle only the names it takes", async () => {
    const { code, imports } = await bundle(`import { SNAPSHOT_REQUEST } from ${JSON.stringify(entry)};\nexport const name = SNAPSHOT_REQUEST;`);
    expect(imports).toEqual([]);
    expect(code).toContain("agents_vue_snapshot_request");
    expect(code).not.toContain("cf_agent_chat_clear");
  });

  it("holds the same names as agents-vue/server", () => {
    const names = Object.keys(wire).toSorted();
    expect(names).toEqual(["CHAT_CLEAR", "CHAT_MESSAGES", "CONNECT_FIELD", "MESSAGE_UPDATED", "SNAPSHOT_FIELD", "SNAPSHOT_ID_FIELD", "SNAPSHOT_REQUEST", "VERSION_FIELD"]);
    for (const name of names) expect((server as Record<string, unknown>)[name]).toBe((wire as Record<string, unknown>)[name]);
  });
});
