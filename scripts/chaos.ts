/**
 * `npm run test:chaos`: the full chaos suite (vitest.chaos.config.ts) with a
 * seed, then its figures: one table row per scenario and one summary line,
 *
 *   chaos: <N> trials, <F> faults, <L> lost, <D> duplicated, <S> stuck
 *
 * Exits non-zero when anything was lost, duplicated or stuck, when another
 * check failed, or when vitest failed. `SEED=<n>` replays a run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChaosRecord } from "../test/support/chaos-commands.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const given = process.env.SEED;
const seed = given && /^\d+$/.test(given) ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 31);
const dir = mkdtempSync(join(tmpdir(), "agents-vue-chaos-"));
const figuresFile = join(dir, "figures.jsonl");
console.log(`chaos: seed ${seed} (rerun with SEED=${seed} npm run test:chaos)`);
const started = Date.now();

const vitest = spawnSync(
  process.execPath,
  [join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.chaos.config.ts", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit", env: { ...process.env, SEED: String(seed), CHAOS_FULL: "1", CHAOS_FIGURES: figuresFile } }
);

const records: ChaosRecord[] = existsSync(figuresFile)
  ? readFileSync(figuresFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ChaosRecord)
  : [];
rmSync(dir, { recursive: true, force: true });

const columns = ["scenario", "trials", "faults", "survived", "lost", "duplicated", "stuck", "other", "upstream"] as const;
const total: ChaosRecord = { scenario: "total", trials: 0, faults: 0, survived: 0, lost: 0, duplicated: 0, stuck: 0, other: 0, upstream: 0 };
for (const record of records) {
  for (const column of columns.slice(1)) (total[column] as number) += record[column] as number;
}
const rows = [...records, total].map((record) => columns.map((column) => String(record[column])));
const widths = columns.map((column, i) => Math.max(column.length, ...rows.map((row) => row[i]!.length)));
const line = (cells: readonly string[]) =>
  `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")} |`;
console.log("");
console.log(line(columns));
console.log(`|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
for (const row of rows) console.log(line(row));
for (const record of records) {
  for (const note of record.notes ?? []) console.log(`  ${record.scenario}: ${note}`);
  for (const note of record.upstreamNotes ?? []) console.log(`  ${record.scenario} (upstream): ${note}`);
}
// How the clients learned the transcript (HTTP reads, snapshot requests, connections), where a scenario counted it.
for (const record of records) {
  const sync = record.sync;
  if (sync) console.log(`chaos sync ${record.scenario}: ${sync.reads} HTTP reads, ${sync.snapshots} snapshot requests, ${sync.connects} connections`);
}
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log("");
console.log(`chaos: seed ${seed}, ${records.length} scenarios reported, ${minutes} min, vitest exit ${vitest.status ?? vitest.signal}, agent ${process.env.E2E_CHAT_AGENT || "ScriptedChatAgent"}`);
if (total.other > 0) console.log(`chaos: ${total.other} other failed checks (leaks, throws, executed tools)`);
if (total.upstream > 0) console.log(`chaos: ${total.upstream} transcripts the server stored with repeated text (mirrored, not counted)`);
console.log(`chaos: ${total.trials} trials, ${total.faults} faults, ${total.lost} lost, ${total.duplicated} duplicated, ${total.stuck} stuck`);
const failed = total.lost + total.duplicated + total.stuck + total.other > 0 || vitest.status !== 0 || records.length === 0;
process.exit(failed ? 1 : 0);
