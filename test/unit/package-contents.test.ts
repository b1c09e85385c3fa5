/**
 * The rules `npm run test:consumer` holds the packed tarball to, and
 * the README / CHANGELOG / package.json agreement, checked on the repo's own
 * files so a drift shows up in the fast tier too.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkReleaseDocs,
  checkTarball,
  importsOf,
  namedFiles,
  readTarball,
  type PackageManifest,
  type PackedFile
} from "../support/package-contents";

const root = resolve(import.meta.dirname, "../..");
const read = (name: string) => readFileSync(join(root, name), "utf8");
const repoManifest = JSON.parse(read("package.json")) as PackageManifest;
/** package.json as `npm pack` puts it in the tarball: prepack (scripts/pack-manifest.mjs) strips `prepare`. */
const { prepare: _prepare, ...packedScripts } = repoManifest.scripts ?? {};
const manifest: PackageManifest = { ...repoManifest, scripts: packedScripts };

const file = (path: string, text: string): PackedFile => ({ path, size: Buffer.byteLength(text), content: Buffer.from(text) });
const map = (sources: string[], sourcesContent?: unknown[]) => JSON.stringify({ version: 3, sources, sourcesContent, mappings: "" });

/** A tarball's files as the build makes them today. */
function goodFiles(): PackedFile[] {
  return [
    file("package.json", "{}"),
    file("README.md", "# agents-vue"),
    file("LICENSE", "MIT"),
    file("CHANGELOG.md", "# Changelog"),
    file("dist/index.js", 'import { ref } from "vue";\nimport { AgentClient } from "agents/client";\nexport { ref };\n//# sourceMappingURL=index.js.map'),
    file("dist/index.js.map", map(["../src/index.ts"], ["export {}"])),
    file("dist/index.d.ts", 'import { UIMessage } from "ai";\nexport {};\n'),
    file("dist/persist/index.js", "export const indexedDBPersistence = () => ({});\n//# sourceMappingURL=index.js.map"),
    file("dist/persist/index.js.map", map(["../../src/persist/index.ts"], ["export {}"])),
    file("dist/persist/index.d.ts", "export {};\n"),
    file("dist/server/index.js", "export const rebuild = () => [];\n//# sourceMappingURL=index.js.map"),
    file("dist/server/index.js.map", map(["../../src/server/index.ts"], ["export {}"])),
    file("dist/server/index.d.ts", "export {};\n"),
    file("dist/voice/index.js", 'import { VoiceClient } from "agents/voice/client";\nexport { VoiceClient };\n//# sourceMappingURL=index.js.map'),
    file("dist/voice/index.js.map", map(["../../src/voice/index.ts"], ["export {}"])),
    file("dist/voice/index.d.ts", "export {};\n"),
    file("dist/wire/index.js", 'export { t as SNAPSHOT_REQUEST } from "../ordered-wire.js";\n//# sourceMappingURL=index.js.map'),
    file("dist/wire/index.js.map", map(["../../src/wire/index.ts"], ["export {}"])),
    file("dist/wire/index.d.ts", "export {};\n"),
    file("dist/testing/index.js", 'import { markRaw } from "vue";\nexport { markRaw };\n//# sourceMappingURL=index.js.map'),
    file("dist/testing/index.js.map", map(["../../src/testing/index.ts"], ["export {}"])),
    file("dist/testing/index.d.ts", "export {};\n"),
    file("dist/ordered-wire.js", 'const t = "agents_vue_snapshot_request";\nexport { t };\n')
  ];
}

const replace = (files: PackedFile[], replacement: PackedFile) => files.map((f) => (f.path === replacement.path ? replacement : f));

describe("namedFiles", () => {
  it("lists every file the exports, main, module and types fields name, once", () => {
    expect(namedFiles(manifest)).toEqual([
      "dist/index.d.ts",
      "dist/index.js",
      "dist/persist/index.d.ts",
      "dist/persist/index.js",
      "dist/server/index.d.ts",
      "dist/server/index.js",
      "dist/testing/index.d.ts",
      "dist/testing/index.js",
      "dist/voice/index.d.ts",
      "dist/voice/index.js",
      "dist/wire/index.d.ts",
      "dist/wire/index.js",
      "package.json"
    ]);
  });
});

describe("importsOf", () => {
  it("finds static, side-effect, type and dynamic imports, but not examples in comments", () => {
    const code = [
      "/** ```ts",
      ' * import { acceptPartialRequests } from "agents-vue/server";',
      " * ``` */",
      'import { a,\n  b } from "./chunk.js";',
      'import "./side-effect.js";',
      'import type { UIMessage } from "ai";',
      'export * from "./more.js";',
      'const later = () => import("./lazy.js");'
    ].join("\n");
    expect(importsOf(code).toSorted()).toEqual(["./chunk.js", "./lazy.js", "./more.js", "./side-effect.js", "ai"]);
  });
});

describe("checkTarball", () => {
  it("accepts the named files, their maps, the documents and package.json", () => {
    expect(checkTarball(manifest, goodFiles())).toEqual([]);
  });

  it("names a file package.json points at that is missing (a pack without a build)", () => {
    const files = goodFiles().filter((f) => !f.path.startsWith("dist/"));
    expect(checkTarball(manifest, files)).toEqual([
      "package.json names dist/index.d.ts, which the tarball lacks",
      "package.json names dist/index.js, which the tarball lacks",
      "package.json names dist/persist/index.d.ts, which the tarball lacks",
      "package.json names dist/persist/index.js, which the tarball lacks",
      "package.json names dist/server/index.d.ts, which the tarball lacks",
      "package.json names dist/server/index.js, which the tarball lacks",
      "package.json names dist/testing/index.d.ts, which the tarball lacks",
      "package.json names dist/testing/index.js, which the tarball lacks",
      "package.json names dist/voice/index.d.ts, which the tarball lacks",
      "package.json names dist/voice/index.js, which the tarball lacks",
      "package.json names dist/wire/index.d.ts, which the tarball lacks",
      "package.json names dist/wire/index.js, which the tarball lacks"
    ]);
  });

  it("names files nothing needs: sources, tests, stray builds", () => {
    const files = [...goodFiles(), file("src/index.ts", "export {}"), file("dist/old-chunk.js", "")];
    expect(checkTarball(manifest, files)).toEqual([
      "src/index.ts is in the tarball, but nothing package.json names needs it",
      "dist/old-chunk.js is in the tarball, but nothing package.json names needs it"
    ]);
  });

  it("follows relative imports to shared chunks, and names a chunk that is missing", () => {
    const withChunk = replace(goodFiles(), file("dist/server/index.js", 'export { x } from "../shared.js";\n'));
    expect(checkTarball(manifest, [...withChunk, file("dist/shared.js", "export const x = 1;")])).toEqual([
      "dist/server/index.js.map is in the tarball, but nothing package.json names needs it"
    ]);
    expect(checkTarball(manifest, withChunk)).toContain("dist/server/index.js names dist/shared.js, which the tarball lacks");
  });

  it("follows a declaration file's import of a chunk to the chunk's declarations, as TypeScript does", () => {
    const typed = replace(goodFiles(), file("dist/wire/index.d.ts", 'import { t as X } from "../wire-types.js";\nexport { X };\n'));
    expect(checkTarball(manifest, [...typed, file("dist/wire-types.d.ts", "export type t = string;\n")])).toEqual([]);
    expect(checkTarball(manifest, typed)).toEqual(["dist/wire/index.d.ts names dist/wire-types.d.ts, which the tarball lacks"]);
  });

  it("names a source map that points at sources without embedding them", () => {
    const files = replace(goodFiles(), file("dist/index.js.map", map(["../src/index.ts"])));
    expect(checkTarball(manifest, files)).toEqual([
      "dist/index.js.map maps sources it does not embed (the tarball ships no src/)"
    ]);
  });

  it("names an import of a package that is neither a dependency nor a peer", () => {
    const files = replace(goodFiles(), file("dist/index.d.ts", 'import { nanoid } from "nanoid";\nimport type { X } from "node:http";\n'));
    expect(checkTarball(manifest, files)).toEqual(['dist/index.d.ts imports "nanoid", which is neither a dependency nor a peer']);
  });

  it("names an import reached from agents-vue/wire, which must import nothing, peers included", () => {
    const files = replace(goodFiles(), file("dist/ordered-wire.js", 'import { CHAT_MESSAGE_TYPES } from "agents/chat";\nexport const t = "x";\n'));
    expect(checkTarball(manifest, files)).toEqual([
      'dist/wire/index.js must import nothing, but dist/ordered-wire.js, which it reaches, imports "agents/chat"'
    ]);
    const direct = replace(goodFiles(), file("dist/wire/index.js", 'export { ref } from "vue";\n//# sourceMappingURL=index.js.map'));
    expect(checkTarball(manifest, direct)).toContain('dist/wire/index.js must import nothing, but it imports "vue"');
  });

  it("names an install script left in the packed package.json: the repo's own prepare, unstripped", () => {
    expect(repoManifest.scripts?.prepare).toBeDefined();
    expect(checkTarball(repoManifest, goodFiles())).toEqual([
      `package.json has a "prepare" script (${repoManifest.scripts!.prepare}): npm runs or flags it when the tarball is installed; prepack should strip it`
    ]);
    expect(checkTarball({ ...manifest, scripts: { postinstall: "node setup.js" } }, goodFiles())).toEqual([
      'package.json has a "postinstall" script (node setup.js): npm runs or flags it when the tarball is installed; prepack should strip it'
    ]);
  });

  it("names a missing document", () => {
    expect(checkTarball(manifest, goodFiles().filter((f) => f.path !== "LICENSE"))).toEqual(["LICENSE is missing from the tarball"]);
  });
});

describe("readTarball", () => {
  it("reads the files and sizes of a gzipped tarball, long pax paths included", () => {
    const dir = mkdtempSync(join(tmpdir(), "agents-vue-tarball-"));
    try {
      const long = `dist/${"very-long-folder-name/".repeat(6)}index.js`;
      for (const [path, text] of [
        ["package/package.json", "{}"],
        ["package/dist/index.js", "x".repeat(1500)],
        [`package/${long}`, "long"]
      ] as const) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      execFileSync("tar", ["--format=pax", "-czf", "pack.tgz", "package"], { cwd: dir });
      const files = readTarball(readFileSync(join(dir, "pack.tgz")));
      expect(files.map((f) => [f.path, f.size]).toSorted()).toEqual([
        ["dist/index.js", 1500],
        [long, 4],
        ["package.json", 2]
      ]);
      expect(files.find((f) => f.path === long)?.content.toString()).toBe("long");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("checkReleaseDocs", () => {
  const readme = read("README.md");
  const changelog = read("CHANGELOG.md");

  it("finds the repo's README Install section and CHANGELOG in line with package.json", () => {
    expect(checkReleaseDocs(manifest, readme, changelog)).toEqual([]);
  });

  it("names a peer range the README gets wrong, and a peer it does not install", () => {
    const peers = { ...manifest.peerDependencies, vue: "^3.4.0", pinia: "^3.0.0" };
    expect(checkReleaseDocs({ ...manifest, peerDependencies: peers }, readme, changelog)).toEqual([
      "README.md's install command does not install pinia",
      "README.md's peer table gives vue ^3.3.9, package.json says ^3.4.0",
      "README.md's peer table gives pinia no row, package.json says ^3.0.0"
    ]);
  });

  it("needs the CHANGELOG to name the version, as a heading or in the Unreleased section", () => {
    const next = { ...manifest, version: "0.2.0" };
    expect(checkReleaseDocs(next, readme, changelog)).toEqual([
      "CHANGELOG.md has no ## [0.2.0] heading and its Unreleased section does not say it is 0.2.0"
    ]);
    expect(checkReleaseDocs(next, readme, changelog.replace("## [Unreleased]", "## [0.2.0] - 2027-01-04"))).toEqual([]);
  });
});
