/**
 * `npm run size`: the size budgets of the library's own code.
 *
 * Five figures, each min+gzip -9 of agents-vue's own code with every peer
 * (`peerDependencies` and `dependencies` of package.json, subpaths included)
 * left as an import:
 *
 * - `dist/index.js` on its own, esbuild-minified (the historical figure);
 * - an app importing only `useAgentChat` from the package, and an app
 *   importing the whole entry, each bundled by esbuild and by rolldown (the
 *   one Vite 8 builds with), tree-shaken and minified as a production build
 *   does (`process.env.NODE_ENV` is `"production"`).
 *
 * The entry is the built file the package exports as `.` (what `npm pack`
 * ships, `files` must cover it); its private chunks are bundled with it. The
 * script builds first when `dist/` is missing or older than `src/`, and fails
 * when the entry is missing after that: a package that ships nothing never
 * passes. Each figure fails when it is more than `tolerance` above the one
 * recorded in `bench/size-budget.json`.
 *
 * `npm run size -- --update` records the current figures (do it when a size
 * change is intended, and say so in the commit).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { esbuildApp, moduleSize, rolldownApp } from "../bench/lib/size.ts";

type Bundler = "esbuild" | "rolldown";
type App = "useAgentChat" | "whole";

interface Budget {
  /** The package's `.` entry, relative to the root. */
  file: string;
  /** Recorded min+gzip bytes of `file` minified on its own. */
  gzip: number;
  /** Allowed growth over each recorded figure, as a fraction. */
  tolerance: number;
  /** Recorded min+gzip bytes of the app builds, per bundler. */
  apps?: Partial<Record<Bundler, Partial<Record<App, number>>>>;
  /** Where each app figure is meant to get to (printed, not enforced). */
  targets?: Partial<Record<App, number>>;
  recorded: string;
  note?: string;
}

interface PackageJson {
  files?: string[];
  exports: { ".": { default: string } };
  peerDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUDGET_FILE = join(ROOT, "bench", "size-budget.json");
const update = process.argv.includes("--update");
const fail = (message: string): never => {
  console.error(`size: ${message}`);
  process.exit(1);
};

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as PackageJson;
const entry = pkg.exports["."].default.replace(/^\.\//, "");
if (!(pkg.files ?? []).some((covered) => entry === covered || entry.startsWith(`${covered.replace(/\/$/, "")}/`))) {
  fail(`package.json's "files" does not ship ${entry}, the "." entry`);
}
const peers = [...Object.keys(pkg.peerDependencies ?? {}), ...Object.keys(pkg.dependencies ?? {})];
/** A peer or a subpath of one (`agents/chat`): stays an import, as in an app that installs it. */
const isPeer = (id: string) => peers.some((name) => id === name || id.startsWith(`${name}/`));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    newest = Math.max(newest, item.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const budget = JSON.parse(readFileSync(BUDGET_FILE, "utf8")) as Budget;
if (budget.file !== entry) fail(`bench/size-budget.json measures ${budget.file}, but the package's "." entry is ${entry}`);
const file = join(ROOT, entry);
if (!existsSync(file) || statSync(file).mtimeMs < newestMtime(join(ROOT, "src"))) {
  console.log(`size: ${entry} is missing or older than src/; running npm run build`);
  const result = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
if (!existsSync(file) || statSync(file).size === 0) fail(`${entry} is missing or empty after the build: the package would ship nothing`);

const gzip = (code: string | Uint8Array) => gzipSync(code, { level: 9 }).length;
const appSource: Record<App, string> = {
  useAgentChat: `export { useAgentChat } from ${JSON.stringify(file)};`,
  whole: `export * from ${JSON.stringify(file)};`
};

const withEsbuild = (source: string) => esbuildApp({ source, root: ROOT, isPeer });
const withRolldown = (source: string) => rolldownApp({ source, root: ROOT, isPeer });

interface Figure {
  name: string;
  gzip: number;
  min: number;
  recorded: number | undefined;
  target?: number;
}

const figures: Figure[] = [];
const whole = await moduleSize(file).catch((error: unknown) => fail(`could not minify ${entry}: ${error instanceof Error ? error.message : String(error)}`));
figures.push({ name: `${entry} (esbuild, on its own)`, gzip: whole.gzip, min: whole.min, recorded: budget.gzip });
const apps: Record<Bundler, Record<App, number>> = { esbuild: { useAgentChat: 0, whole: 0 }, rolldown: { useAgentChat: 0, whole: 0 } };
for (const bundler of ["esbuild", "rolldown"] as const) {
  for (const app of ["useAgentChat", "whole"] as const) {
    let code: string | Uint8Array = "";
    try {
      code = bundler === "esbuild" ? await withEsbuild(appSource[app]) : await withRolldown(appSource[app]);
    } catch (error) {
      fail(`${bundler} could not bundle the ${app} app from ${entry}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const min = typeof code === "string" ? Buffer.byteLength(code) : code.length;
    if (min === 0) fail(`the ${app} app built by ${bundler} is empty`);
    apps[bundler][app] = gzip(code);
    figures.push({
      name: `${app === "whole" ? "the whole entry" : "an app importing only useAgentChat"} (${bundler}, production)`,
      gzip: apps[bundler][app],
      min,
      recorded: budget.apps?.[bundler]?.[app],
      ...(budget.targets?.[app] ? { target: budget.targets[app] } : {})
    });
  }
}

const percent = (fraction: number) => `${fraction >= 0 ? "+" : ""}${(fraction * 100).toFixed(1)}%`;
let over = 0;
for (const figure of figures) {
  const limit = figure.recorded === undefined ? undefined : Math.floor(figure.recorded * (1 + budget.tolerance));
  const against =
    figure.recorded === undefined || limit === undefined
      ? "no budget recorded"
      : `budget ${figure.recorded} B + ${Math.round(budget.tolerance * 100)}% = ${limit} B (${percent(figure.gzip / figure.recorded - 1)})`;
  const target = figure.target === undefined ? "" : `; target ${figure.target} B (${figure.gzip <= figure.target ? "met" : `${figure.gzip - figure.target} B to go`})`;
  const line = `${figure.name}: ${figure.gzip} B min+gzip (${figure.min} B min); ${against}${target}`;
  if (!update && (limit === undefined || figure.gzip > limit)) {
    over++;
    console.error(`size: ${limit === undefined ? "unbudgeted" : "over budget"}. ${line}`);
  } else {
    console.log(`size: ${update ? "" : "ok. "}${line}`);
  }
}

if (update) {
  const recorded: Budget = { ...budget, gzip: whole.gzip, apps, recorded: new Date().toISOString().slice(0, 10) };
  writeFileSync(BUDGET_FILE, `${JSON.stringify(recorded, null, 2)}\n`);
  console.log(`size: recorded in ${relative(ROOT, BUDGET_FILE)}`);
} else if (over > 0) {
  console.error("If the growth is intended, run `npm run size -- --update` and say why in the commit.");
  process.exit(1);
}
