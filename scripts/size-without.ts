/**
 * `npm run size:without -- <module> ...`: what an app importing only
 * `useAgentChat` would pay if the named modules of `src/` cost nothing.
 *
 * A measurement for size decisions (issue 30), not a budget: it bundles
 * `src/index.ts` the way `npm run size` bundles the built entry (tree-shaken,
 * minified, `NODE_ENV=production`, every peer left as an import, gzip -9),
 * by esbuild and by Vite 8's rolldown, once as it is and once with each named
 * module replaced by a stand-in that exports its names and nothing else. The
 * stand-in bundles and minifies; it does not run. What stays is what the rest
 * of the code needs to call the module, so a figure is an upper bound of what
 * dropping (or making opt-in) that behaviour could save.
 *
 *   npm run size:without -- src/core/outbox.ts src/core/direct-lane.ts
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { esbuildApp, rolldownApp } from "../bench/lib/size.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ENTRY = join(ROOT, "src", "index.ts");
const APP = `export { useAgentChat } from ${JSON.stringify(ENTRY)};`;

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { peerDependencies?: Record<string, string> };
const peers = Object.keys(pkg.peerDependencies ?? {});
const isPeer = (id: string) => peers.some((name) => id === name || id.startsWith(`${name}/`));

const named = process.argv.slice(2).filter((arg) => arg !== "--");
if (named.length === 0) {
  console.error("size:without: name the modules to leave out, e.g. npm run size:without -- src/core/outbox.ts");
  process.exit(2);
}
const left = new Set(named.map((path) => resolve(ROOT, path)));
for (const path of left) {
  try {
    readFileSync(path);
  } catch {
    console.error(`size:without: ${relative(ROOT, path)} is not a file`);
    process.exit(2);
  }
}

/** A module's exported names, each bound to a function that returns itself (callable, constructible, any property). */
function standIn(path: string): string {
  const names = new Set<string>();
  for (const match of readFileSync(path, "utf8").matchAll(/^export\s+(?:async\s+)?(?:function|class|const|let)\s+([\w$]+)/gm)) {
    names.add(match[1] as string);
  }
  return [...names].map((name) => `export const ${name} = /* @__PURE__ */ (() => { const f = function () { return f; }; return f; })();`).join("\n");
}

/** The app, built with each module in `without` replaced by its stand-in. */
const app = (without: ReadonlySet<string>) => ({ source: APP, root: ROOT, isPeer, standIn: (path: string) => (without.has(path) ? standIn(path) : undefined) });
const withEsbuild = (without: ReadonlySet<string>) => esbuildApp(app(without));
const withRolldown = (without: ReadonlySet<string>) => rolldownApp(app(without));

const gzip = (code: string | Uint8Array) => gzipSync(code, { level: 9 }).length;
console.log(`size:without: an app importing only useAgentChat, from src/, min+gzip -9; without ${named.join(", ")}`);
for (const [bundler, bundle] of [
  ["esbuild", withEsbuild],
  ["rolldown", withRolldown]
] as const) {
  const before = gzip(await bundle(new Set()));
  const after = gzip(await bundle(left));
  console.log(`  ${bundler.padEnd(8)} ${before} B as it is, ${after} B without them (${after - before} B)`);
}
