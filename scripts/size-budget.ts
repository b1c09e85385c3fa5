/**
 * `npm run size`: the size budget of the library's own code.
 *
 * Minifies `dist/index.js` (peers stay imports) with esbuild, gzips it at
 * level 9 and fails when the result is more than `tolerance` (10%) above the
 * figure recorded in `bench/size-budget.json`. Builds first when `dist/` is
 * missing or older than `src/`.
 *
 * `npm run size -- --update` records the current figure (do it when a size
 * change is intended, and say so in the commit).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { moduleSize } from "../bench/lib/size.ts";

interface Budget {
  file: string;
  /** Recorded min+gzip bytes. */
  gzip: number;
  /** Allowed growth over `gzip`, as a fraction. */
  tolerance: number;
  recorded: string;
  note?: string;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUDGET_FILE = join(ROOT, "bench", "size-budget.json");
const update = process.argv.includes("--update");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const budget = JSON.parse(readFileSync(BUDGET_FILE, "utf8")) as Budget;
const file = join(ROOT, budget.file);
if (!existsSync(file) || statSync(file).mtimeMs < newestMtime(join(ROOT, "src"))) {
  console.log(`size: ${budget.file} is missing or older than src/; running npm run build`);
  const result = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const size = await moduleSize(file);
const limit = Math.floor(budget.gzip * (1 + budget.tolerance));
const change = ((size.gzip / budget.gzip - 1) * 100).toFixed(1);
const summary = `${budget.file}: ${size.gzip} B min+gzip (${size.min} B min); budget ${budget.gzip} B + ${Math.round(budget.tolerance * 100)}% = ${limit} B (${Number(change) >= 0 ? "+" : ""}${change}%)`;

if (update) {
  writeFileSync(BUDGET_FILE, `${JSON.stringify({ ...budget, gzip: size.gzip, recorded: new Date().toISOString().slice(0, 10) }, null, 2)}\n`);
  console.log(`size: recorded ${size.gzip} B in bench/size-budget.json`);
} else if (size.gzip > limit) {
  console.error(`size: over budget. ${summary}`);
  console.error("If the growth is intended, run `npm run size -- --update` and say why in the commit.");
  process.exit(1);
} else {
  console.log(`size: ok. ${summary}`);
}
