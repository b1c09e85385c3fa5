/**
 * How `npm run test:consumer` measures the starter's initial JavaScript:
 * the entry scripts of index.html and their static imports, never what
 * `import()` loads later.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { entryScripts, initialJavaScript, staticImports } from "../support/initial-js";

describe("entryScripts", () => {
  it("takes module scripts and modulepreload links from the page, not styles, classic scripts or other origins", () => {
    const html = `<!doctype html><head>
      <script type="module" crossorigin src="/assets/index-a1.js"></script>
      <link rel="modulepreload" crossorigin href="/assets/vendor-b2.js">
      <link rel="stylesheet" href="/assets/index-c3.css">
      <script src="/legacy.js"></script>
      <script type="module" src="https://cdn.example.com/x.js"></script>
    </head>`;
    expect(entryScripts(html)).toEqual(["/assets/index-a1.js", "/assets/vendor-b2.js"]);
  });
});

describe("staticImports", () => {
  it("finds minified static imports and re-exports, and leaves import() out", () => {
    const code =
      'import{a as b,c}from"./vendor-b2.js";import"./side-d4.js";export{x}from"../shared-e5.js";' +
      'const m=()=>__vitePreload(()=>import("./Markdown-f6.js"),__vite__mapDeps([0,1]));import * as ns from "./ns-g7.js"';
    expect(staticImports(code)).toEqual(["./vendor-b2.js", "./side-d4.js", "../shared-e5.js", "./ns-g7.js"]);
  });
});

describe("initialJavaScript", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("adds the entry and what it imports statically, each once, and leaves the lazy chunk out", () => {
    root = mkdtempSync(join(tmpdir(), "initial-js-"));
    mkdirSync(join(root, "assets"));
    const files: Record<string, string> = {
      "index.html": '<script type="module" src="/assets/index.js"></script><link rel="modulepreload" href="/assets/vendor.js">',
      "assets/index.js": 'import{v}from"./vendor.js";import"./shared.js";const lazy=()=>import("./Markdown.js");',
      "assets/vendor.js": 'import"./shared.js";export const v=1;',
      "assets/shared.js": "export const s=2;".repeat(50),
      "assets/Markdown.js": "export default 3;".repeat(5000)
    };
    for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
    const measured = initialJavaScript(root);
    expect(measured.scripts.map((script) => script.path).toSorted()).toEqual(["assets/index.js", "assets/shared.js", "assets/vendor.js"]);
    const expected = ["assets/index.js", "assets/vendor.js", "assets/shared.js"].reduce((sum, path) => sum + gzipSync(files[path]!).length, 0);
    expect(measured.gzipBytes).toBe(expected);
  });
});
