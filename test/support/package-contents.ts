/**
 * What a packed tarball holds, and whether it is what a user needs:
 * every file package.json names, what those files reach (relative imports,
 * source maps), the three documents, and nothing else. Also whether the
 * README's Install section and the CHANGELOG agree with package.json.
 * Used by `npm run test:consumer`; pure functions, tested in the unit tier.
 */
import { builtinModules } from "node:module";
import { posix } from "node:path";
import { gunzipSync } from "node:zlib";

export interface PackedFile {
  /** Path inside the package, e.g. `dist/index.js` (without npm's `package/` prefix). */
  path: string;
  size: number;
  content: Buffer;
}

/** The fields of package.json this module reads. */
export interface PackageManifest {
  name: string;
  version: string;
  main?: string;
  module?: string;
  types?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
}

/**
 * Lifecycle scripts npm runs, or lists as install scripts to approve, when a
 * package is installed from a tarball or git. A tarball needs none (dist/ is
 * built), and the repo's `prepare` names a file the tarball does not hold.
 */
export const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"] as const;

/** The documents a user reads next to the code; always shipped. */
export const DOCUMENTS = ["README.md", "LICENSE", "CHANGELOG.md"] as const;

/** Reads the files of a gzipped tarball as `npm pack` writes it (ustar, with pax paths). */
export function readTarball(gzipped: Buffer): PackedFile[] {
  const data = gunzipSync(gzipped);
  const files: PackedFile[] = [];
  let paxPath: string | undefined;
  for (let offset = 0; offset + 512 <= data.length; ) {
    const header = data.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header.subarray(start, start + length).toString("utf8").replace(/\0[\s\S]*$/, "");
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    const body = data.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString("utf8"))?.[1];
      continue;
    }
    const prefix = field(345, 155);
    const path = paxPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    paxPath = undefined;
    if (type !== "0" && type !== "") continue; // directories, links
    files.push({ path: path.replace(/^package\//, ""), size, content: Buffer.from(body) });
  }
  return files;
}

function normalizeEntry(path: string): string {
  return posix.normalize(path).replace(/^\.\//, "");
}

function collectStrings(value: unknown, into: string[]): void {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) value.forEach((item) => collectStrings(item, into));
  else if (value && typeof value === "object") Object.values(value).forEach((item) => collectStrings(item, into));
}

/** Every file the `exports`, `main`, `module` and `types` fields name, as package paths. */
export function namedFiles(manifest: PackageManifest): string[] {
  const targets: string[] = [];
  collectStrings(manifest.exports, targets);
  for (const field of [manifest.main, manifest.module, manifest.types]) if (field) targets.push(field);
  return [...new Set(targets.map(normalizeEntry))].toSorted();
}

function stripBlockComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, "");
}

/** Module specifiers a built `.js` or `.d.ts` file imports or re-exports. */
export function importsOf(code: string): string[] {
  const source = stripBlockComments(code);
  const specifiers = new Set<string>();
  const patterns = [
    /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) specifiers.add(match[1]!);
  return [...specifiers];
}

function sourceMapOf(code: string): string | undefined {
  return /\/\/# sourceMappingURL=(\S+)\s*$/.exec(code)?.[1];
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * Entries that must import nothing, not even a peer, through any chunk they
 * reach: `agents-vue/wire` holds strings a client bundle takes for free.
 */
export const IMPORT_FREE_ENTRIES: readonly string[] = ["dist/wire/index.js"];

/** What a relative import names: from a declaration file, TypeScript reads `./chunk.js` as `./chunk.d.ts`. */
function declarationFor(path: string, specifier: string): string {
  return /\.d\.m?ts$/.test(path) ? specifier.replace(/\.(m?)js$/, ".d.$1ts") : specifier;
}

const builtins = new Set(builtinModules);
const isCode = (path: string) => /\.(?:m?js|d\.m?ts)$/.test(path);

/**
 * Checks a tarball's files against its package.json; returns the problems
 * found, each a sentence naming the file (empty when the tarball is right).
 */
export function checkTarball(manifest: PackageManifest, files: PackedFile[]): string[] {
  const problems: string[] = [];
  const byPath = new Map(files.map((file) => [file.path, file]));
  const allowedPackages = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);

  for (const document of ["package.json", ...DOCUMENTS]) {
    if (!byPath.has(document)) problems.push(`${document} is missing from the tarball`);
  }
  for (const script of INSTALL_SCRIPTS) {
    const command = manifest.scripts?.[script];
    if (command !== undefined) {
      problems.push(`package.json has a "${script}" script (${command}): npm runs or flags it when the tarball is installed; prepack should strip it`);
    }
  }

  // Walk from the named files through relative imports and source maps.
  const named = namedFiles(manifest);
  const needed = new Set<string>(["package.json", ...DOCUMENTS]);
  const queue = named.map((path) => ({ path, from: "package.json" }));
  while (queue.length > 0) {
    const { path, from } = queue.shift()!;
    if (needed.has(path)) continue;
    needed.add(path);
    const file = byPath.get(path);
    if (!file) {
      problems.push(`${from} names ${path}, which the tarball lacks`);
      continue;
    }
    if (!isCode(path)) continue;
    const code = file.content.toString("utf8");
    const map = sourceMapOf(code);
    if (map && !map.startsWith("data:")) queue.push({ path: posix.join(posix.dirname(path), map), from: path });
    for (const specifier of importsOf(code)) {
      if (specifier.startsWith(".")) {
        queue.push({ path: posix.join(posix.dirname(path), declarationFor(path, specifier)), from: path });
      } else if (!specifier.startsWith("node:") && !builtins.has(specifier) && !allowedPackages.has(packageNameOf(specifier))) {
        problems.push(`${path} imports "${specifier}", which is neither a dependency nor a peer`);
      }
    }
  }

  // The import-free entries: every module they reach imports only relative chunks.
  for (const entry of IMPORT_FREE_ENTRIES) {
    if (!named.includes(entry)) continue;
    const seen = new Set<string>();
    const walk = [entry];
    while (walk.length > 0) {
      const path = walk.shift()!;
      const file = byPath.get(path);
      if (seen.has(path) || !file) continue;
      seen.add(path);
      for (const specifier of importsOf(file.content.toString("utf8"))) {
        if (specifier.startsWith(".")) walk.push(posix.join(posix.dirname(path), specifier));
        else problems.push(`${entry} must import nothing, but ${path === entry ? "it" : `${path}, which it reaches,`} imports "${specifier}"`);
      }
    }
  }

  for (const file of files) {
    if (!needed.has(file.path)) problems.push(`${file.path} is in the tarball, but nothing package.json names needs it`);
    if (file.path.endsWith(".map")) {
      const map = JSON.parse(file.content.toString("utf8")) as { sources?: unknown[]; sourcesContent?: unknown[] };
      const sources = map.sources ?? [];
      const embedded = map.sourcesContent ?? [];
      if (sources.length !== embedded.length || embedded.some((text) => typeof text !== "string")) {
        problems.push(`${file.path} maps sources it does not embed (the tarball ships no src/)`);
      }
    }
  }
  return problems;
}

function section(markdown: string, heading: RegExp): string | undefined {
  const start = markdown.search(heading);
  if (start < 0) return undefined;
  const rest = markdown.slice(start);
  const next = rest.slice(1).search(/^## /m);
  return next < 0 ? rest : rest.slice(0, next + 1);
}

/**
 * Checks that the README's Install section installs the package with every
 * peer and lists the peers with package.json's ranges, and that the CHANGELOG
 * names package.json's version. Returns the problems found.
 */
export function checkReleaseDocs(manifest: PackageManifest, readme: string, changelog: string): string[] {
  const problems: string[] = [];
  const peers = manifest.peerDependencies ?? {};

  const install = section(readme, /^## Install\s*$/m);
  if (!install) {
    problems.push("README.md has no ## Install section");
  } else {
    const command = /^npm install (.+)$/m.exec(install)?.[1];
    const installed = new Set((command ?? "").split(/\s+/).map((token) => token.replace(/(?!^)@.*$/, "")));
    for (const name of [manifest.name, ...Object.keys(peers)]) {
      if (!installed.has(name)) problems.push(`README.md's install command does not install ${name}`);
    }
    const rows = new Map([...install.matchAll(/^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|/gm)].map((row) => [row[1]!, row[2]!]));
    for (const [name, range] of Object.entries(peers)) {
      if (rows.get(name) !== range) {
        problems.push(`README.md's peer table gives ${name} ${rows.get(name) ?? "no row"}, package.json says ${range}`);
      }
    }
    for (const name of rows.keys()) {
      if (!(name in peers)) problems.push(`README.md's peer table lists ${name}, which is not a peer`);
    }
  }

  const escaped = manifest.version.replace(/\./g, "\\.");
  const released = new RegExp(`^## \\[${escaped}\\]`, "m").test(changelog);
  const unreleased = section(changelog, /^## \[Unreleased\]/m)?.split(/^### /m)[0] ?? "";
  if (!released && !new RegExp(`\\b${escaped}\\b`).test(unreleased)) {
    problems.push(`CHANGELOG.md has no ## [${manifest.version}] heading and its Unreleased section does not say it is ${manifest.version}`);
  }
  return problems;
}
