/**
 * Compatibility job (`npm run test:compat`): proves the peer range that
 * package.json declares by testing both of its ends.
 *
 * For each row it copies the repo's tracked files into `.compat/<label>/`
 * (git-ignored), pins the peers and the chat server there, installs, and runs
 * the unit, types, browser and e2e tiers (the e2e tier runs the fixture worker
 * under `wrangler dev` on the pinned `@cloudflare/ai-chat` and `agents`):
 *
 * - `lowest`: every peer at the lowest version its declared range admits, the
 *   server at SERVER_FLOOR;
 * - `newest`: every peer at the newest version its declared range admits, the
 *   server at the newest version in SERVER_RANGE.
 *
 * The versions come from the registry and from package.json's
 * `peerDependencies` at run time, so the job always tests exactly the range
 * that is declared. It prints a table of versions x pass/fail and exits 1 when
 * any row fails.
 *
 * Options: `--only <label>` runs one row; `--tiers unit,e2e` picks the tiers;
 * `--keep` leaves the copies in `.compat/` (they are deleted on success);
 * `--peer name=range` tries a range before declaring it (e.g. a wider one).
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The oldest `@cloudflare/ai-chat` server the e2e tier is proven against. Older
 * ones do not build on `agents` 0.32: 0.10.x imports `agents/chat` internals
 * it no longer exports (`STREAM_CLEANUP_DELAY_SECONDS`, `cleanupStreamBuffers`…).
 */
const SERVER_FLOOR = "0.12.0";
/** The server versions in scope; the newest of these is tested. */
const SERVER_RANGE = "<1.0.0";
/** The peers whose ranges are tested, in table order. */
const PEERS = ["agents", "ai", "vue"] as const;
const SERVER = "@cloudflare/ai-chat";
const ALL_TIERS = ["unit", "types", "browser", "e2e"] as const;
/** A tier that runs longer than this is killed and fails. */
const TIER_TIMEOUT_MS = 15 * 60_000;

type Tier = (typeof ALL_TIERS)[number];
type Versions = Record<(typeof PEERS)[number] | typeof SERVER, string>;

interface Row {
  label: string;
  versions: Versions;
}

interface RowResult {
  row: Row;
  /** What node_modules in the copy really holds, per package. */
  installed: Record<string, string>;
  install: boolean;
  tiers: Partial<Record<Tier, { ok: boolean; seconds: number; summary: string }>>;
  seconds: number;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const COMPAT_DIR = join(ROOT, ".compat");

interface Args {
  only?: string;
  tiers: Tier[];
  keep: boolean;
  peers: Record<string, string>;
}

function parseArgs(argv: string[]): Args {
  let only: string | undefined;
  let tiers: Tier[] = [...ALL_TIERS];
  let keep = false;
  const peers: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--only") only = argv[++i];
    else if (arg === "--keep") keep = true;
    else if (arg === "--peer") {
      const [name, range] = String(argv[++i]).split("=");
      if (!name || !range) throw new Error("--peer takes name=range");
      peers[name] = range;
    }
    else if (arg === "--tiers") {
      const picked = String(argv[++i]).split(",");
      for (const tier of picked) {
        if (!(ALL_TIERS as readonly string[]).includes(tier)) throw new Error(`unknown tier ${tier}`);
      }
      tiers = ALL_TIERS.filter((tier) => picked.includes(tier));
    } else throw new Error(`unknown argument ${arg}`);
  }
  return { only, tiers, keep, peers };
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}):\n${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Published versions of `pkg` in `range`, oldest first (no prereleases). */
function versionsIn(pkg: string, range: string): string[] {
  const out = run("npm", ["view", `${pkg}@${range}`, "version", "--json"], ROOT).trim();
  if (!out) throw new Error(`no published ${pkg} matches ${range}`);
  const parsed: unknown = JSON.parse(out);
  const list = Array.isArray(parsed) ? parsed.map(String) : [String(parsed)];
  // npm lists them in publish order, not version order.
  return list.filter((version) => !version.includes("-")).toSorted(compareVersions);
}

function endsOf(pkg: string, range: string): { lowest: string; newest: string } {
  const list = versionsIn(pkg, range);
  return { lowest: list[0] as string, newest: list[list.length - 1] as string };
}

/** The version of a package the repo's own install holds. */
function installed(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
}

/**
 * Whether a row holds exactly the versions the repo's lockfile installed: `npm test` runs those
 * already, so CI leaves the row out (`COMPAT_ALL=1`, or naming the row, runs it anyway).
 */
function isLockfiles(row: Row): boolean {
  const same = [...PEERS, SERVER].every((name) => installed(name) === row.versions[name]);
  if (same) console.log(`[compat] ${row.label}: the lockfile's versions, which npm test runs; left out (COMPAT_ALL=1 runs it)`);
  return same;
}

function planRows(overrides: Record<string, string>): Row[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    peerDependencies: Record<string, string>;
  };
  Object.assign(pkg.peerDependencies, overrides);
  const lowest = {} as Versions;
  const newest = {} as Versions;
  for (const peer of PEERS) {
    const range = pkg.peerDependencies[peer];
    if (!range) throw new Error(`package.json declares no peer range for ${peer}`);
    const ends = endsOf(peer, range);
    lowest[peer] = ends.lowest;
    newest[peer] = ends.newest;
  }
  lowest[SERVER] = SERVER_FLOOR;
  newest[SERVER] = endsOf(SERVER, SERVER_RANGE).newest;
  return [
    { label: "lowest", versions: lowest },
    { label: "newest", versions: newest }
  ];
}

/** Copies the tracked files (as they are in the work tree) into `dest`. */
function copyTrackedFiles(dest: string): void {
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const files = run("git", ["ls-files", "-z"], ROOT).split("\0").filter(Boolean);
  for (const file of files) {
    const from = join(ROOT, file);
    if (!existsSync(from)) continue; // deleted in the work tree
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(from, join(dest, file));
  }
}

/** Pins the row's versions in the copy's package.json; the lockfile goes. */
function pinVersions(dest: string, versions: Versions): void {
  const file = join(dest, "package.json");
  const pkg = JSON.parse(readFileSync(file, "utf8")) as { devDependencies: Record<string, string> };
  for (const [name, version] of Object.entries(versions)) pkg.devDependencies[name] = version;
  writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
  rmSync(join(dest, "package-lock.json"), { force: true });
}

function installedVersion(dest: string, name: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(dest, "node_modules", name, "package.json"), "utf8")) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return "missing";
  }
}

/** Runs a command with the copy's node_modules/.bin first on PATH (Node 22 from the `node` devDependency). */
function runLogged(
  command: string,
  args: string[],
  cwd: string,
  logFile: string,
  timeoutMs: number
): Promise<{ ok: boolean; output: string }> {
  return new Promise((done) => {
    const env = { ...process.env, PATH: `${join(cwd, "node_modules", ".bin")}:${process.env.PATH ?? ""}`, CI: "1" };
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const timer = setTimeout(() => {
      output += `\n[compat] killed after ${timeoutMs / 1000}s\n`;
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      writeFileSync(logFile, output);
      done({ ok: code === 0, output });
    });
  });
}

// oxlint-disable-next-line no-control-regex -- stripping ANSI colour codes
const ANSI = /\x1b\[[0-9;]*m/g;

function vitestSummary(output: string): string {
  const plain = output.replace(ANSI, "");
  const tests = /^\s*Tests\s+(.+)$/m.exec(plain)?.[1]?.trim();
  const killed = plain.includes("[compat] killed after");
  return [tests ?? "no summary", killed ? "timed out" : ""].filter(Boolean).join(", ");
}

/**
 * What a failing tier printed about its failures: the failing lines, then
 * vitest's own failure sections (the error and where it was thrown), so a CI
 * log that keeps only this job's output still says why a row failed.
 */
function failureReport(output: string): string {
  const lines = output.replace(ANSI, "").split("\n");
  const failing = lines.filter((line) => /FAIL|✗|×/.test(line)).slice(0, 40);
  const detailsAt = lines.findIndex((line) => /⎯ (Failed (Suites|Tests)|Unhandled Errors?|Startup Error) /.test(line));
  const details = detailsAt === -1 ? [] : lines.slice(detailsAt, detailsAt + 120);
  return [...failing, ...details].join("\n");
}

const seconds = (since: number) => Math.round((Date.now() - since) / 1000);

async function runRow(row: Row, tiers: Tier[]): Promise<RowResult> {
  const started = Date.now();
  const dest = join(COMPAT_DIR, row.label);
  const result: RowResult = { row, installed: {}, install: false, tiers: {}, seconds: 0 };
  console.log(`\n[compat] ${row.label}: ${Object.entries(row.versions).map(([n, v]) => `${n}@${v}`).join(" ")}`);

  copyTrackedFiles(dest);
  pinVersions(dest, row.versions);
  const install = await runLogged(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline"],
    dest,
    join(dest, "compat-install.log"),
    TIER_TIMEOUT_MS
  );
  for (const name of [...PEERS, SERVER]) result.installed[name] = installedVersion(dest, name);
  result.install =
    install.ok && Object.entries(row.versions).every(([name, version]) => result.installed[name] === version);
  console.log(`[compat] ${row.label}: install ${result.install ? "ok" : "FAILED"} (${seconds(started)}s)`);
  if (!result.install) {
    console.log(install.output.split("\n").slice(-30).join("\n"));
    result.seconds = seconds(started);
    return result;
  }

  for (const tier of tiers) {
    const tierStarted = Date.now();
    const outcome = await runLogged(
      join(dest, "node_modules", ".bin", "vitest"),
      ["run", "--project", tier],
      dest,
      join(dest, `compat-${tier}.log`),
      TIER_TIMEOUT_MS
    );
    const summary = vitestSummary(outcome.output);
    result.tiers[tier] = { ok: outcome.ok, seconds: seconds(tierStarted), summary };
    console.log(`[compat] ${row.label}: ${tier} ${outcome.ok ? "pass" : "FAIL"} (${summary}; ${seconds(tierStarted)}s)`);
    if (!outcome.ok) {
      console.log(failureReport(outcome.output));
    }
  }
  result.seconds = seconds(started);
  return result;
}

function printTable(results: RowResult[], tiers: Tier[]): void {
  const header = ["row", ...PEERS, `${SERVER} (server)`, "install", ...tiers, "time"];
  const rows = results.map((result) => [
    result.row.label,
    ...PEERS.map((name) => result.installed[name] ?? result.row.versions[name]),
    result.installed[SERVER] ?? result.row.versions[SERVER],
    result.install ? "ok" : "FAIL",
    ...tiers.map((tier) => {
      const outcome = result.tiers[tier];
      if (!outcome) return "-";
      return `${outcome.ok ? "pass" : "FAIL"} (${outcome.summary})`;
    }),
    `${result.seconds}s`
  ]);
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] as number)).join(" | ")} |`;
  console.log(`\n${line(header)}`);
  console.log(`|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`);
  for (const row of rows) console.log(line(row.map(String)));
}

async function main(): Promise<void> {
  const started = Date.now();
  const { only, tiers, keep, peers } = parseArgs(process.argv.slice(2));
  if (tiers.some((tier) => tier !== "unit")) {
    const ensure = spawnSync(process.execPath, [join(ROOT, "scripts", "ensure-browser.ts")], { stdio: "inherit" });
    if (ensure.status !== 0) process.exit(1);
  }
  if (Object.keys(peers).length > 0) console.log(`[compat] trying peer ranges ${JSON.stringify(peers)}`);
  const rows = planRows(peers)
    .filter((row) => !only || row.label === only)
    .filter((row) => only !== undefined || process.env.COMPAT_ALL === "1" || !isLockfiles(row));
  if (rows.length === 0) throw new Error(`no row named ${only}`);

  const results: RowResult[] = [];
  for (const row of rows) results.push(await runRow(row, tiers));

  printTable(results, tiers);
  const ok = results.every((result) => result.install && tiers.every((tier) => result.tiers[tier]?.ok));
  console.log(`\n[compat] ${ok ? "all rows pass" : "FAILED"} in ${seconds(started)}s`);
  if (ok && !keep) {
    for (const result of results) rmSync(join(COMPAT_DIR, result.row.label), { recursive: true, force: true });
  } else {
    console.log(`[compat] logs: ${results.map((result) => join(".compat", result.row.label, "compat-*.log")).join(" ")}`);
  }
  process.exit(ok ? 0 : 1);
}

await main();
