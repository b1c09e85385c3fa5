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
import { build as esbuild } from "esbuild";
import { rolldownApp } from "../bench/lib/size.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ENTRY = join(ROOT, "src", "index.ts");
const APP = `export { useAgentChat } from ${JSON.stringify(ENTRY)};`;
const PRODUCTION = { "process.env.NODE_ENV": JSON.stringify("production") };

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

async function withEsbuild(without: ReadonlySet<string>): Promise<Uint8Array> {
  const result = await esbuild({
    stdin: { contents: APP, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    define: PRODUCTION,
    logLevel: "silent",
    plugins: [
      {
        name: "peers-and-stand-ins",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => (isPeer(args.path) ? { path: args.path, external: true } : undefined));
          b.onLoad({ filter: /\.ts$/ }, (args) => (without.has(args.path) ? { contents: standIn(args.path), loader: "ts" } : undefined));
        }
      }
    ]
  });
  return result.outputFiles[0]!.contents;
}

const withRolldown = (without: ReadonlySet<string>) =>
  rolldownApp(ROOT, APP, isPeer, (id) => (without.has(id) ? { code: standIn(id), moduleType: "ts" } : null));

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
