/**
 * `npm run test:model`: the chat model's property test at full size (200,000
 * runs) with a fresh seed, printed first. `SEED=<n>` replays a run and
 * `RUNS=<n>` changes its size; `npm test` runs 1,500 with a fixed seed.
 */
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const given = process.env.SEED;
const seed = given && /^\d+$/.test(given) ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 31);
const runs = process.env.RUNS && /^\d+$/.test(process.env.RUNS) ? process.env.RUNS : "200000";
console.log(`model: seed ${seed}, ${runs} runs (rerun with SEED=${seed} npm run test:model)`);
const result = spawnSync(
  process.execPath,
  [join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--project", "unit", "test/unit/model.property.test.ts", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit", env: { ...process.env, SEED: String(seed), RUNS: runs, MODEL_FULL: "1" } }
);
process.exit(result.status ?? 1);
