/**
 * `npm run bench`: agents-vue (A) against upstream's React hook (B) and a
 * framework-free WebSocket client (C), in one headless Chromium, against one
 * `wrangler dev` bench agent. See bench/BENCHMARKS.md for the method.
 *
 * 1. builds the library (`npm run build` unless dist/ is newer than src/; for
 *    the Size scenario) and the three
 *    bench pages (Vite, production; plus unminified A and B for profiles);
 * 2. starts the bench worker (bench/worker) and a static server for the pages;
 * 3. runs every scenario, A/B/C alternating (rotating order) over `BENCH_ROUNDS`
 *    rounds (default 5), a fresh browser context and page per run;
 * 4. profiles A's (and B's) worst scenario;
 * 5. writes bench/results.json, bench/chart.svg, the figures section of
 *    bench/BENCHMARKS.md, and prints the Markdown tables.
 *
 * Environment: BENCH_ROUNDS (default 5), BENCH_ONLY (comma list of
 * stream,replay,long,churn,request — a partial run writes results.json under
 * bench/.tmp instead), BENCH_TRACE=1 (also trace the profiled runs: self time
 * per renderer trace event), BENCH_REPORT_ONLY=1 (no runs: re-render the tables,
 * chart and BENCHMARKS.md from bench/results.json, sizes measured afresh),
 * CHROMIUM_PATH.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type CDPSession, type Page } from "playwright";
import { build as viteBuild } from "vite";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { startWorker, type WorkerServer } from "../test/support/wrangler.ts";
import type { FinalText, LeakCounts, MountConfig } from "./pages/src/harness.ts";
import { summarizeProfile, type CpuProfile } from "./lib/profile.ts";
import { summarizeTrace } from "./lib/trace.ts";
import { renderReport } from "./lib/report.ts";
import { bundleSize, moduleSize, pageSize, sourceBreakdown } from "./lib/size.ts";
import { serveStatic, type StaticServer } from "./lib/static.ts";
import { CLIENTS, type ChurnRecord, type Client, type ProfileResult, type Results, type RunRecord, type SizeResults } from "./lib/types.ts";

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, "..");
const TMP = join(BENCH, ".tmp");
const DIST = join(TMP, "dist");
const DIST_PROFILE = join(TMP, "dist-profile");

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const ONLY = new Set((process.env.BENCH_ONLY ?? "").split(",").filter(Boolean));
const runs = (scenario: string) => ONLY.size === 0 || ONLY.has(scenario);

const SETTINGS = {
  streamChunks: 2000,
  replayChunks: 10_000,
  longChunks: 500,
  longShort: 10,
  longLong: 1000,
  churnCycles: 100,
  churnReconnects: 100,
  churnTranscript: 10,
  throttleMs: 50,
  settleMs: 150,
  finalTimeoutMs: 60_000
};
const REQUEST_SIZES = [10, 100, 500];

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)}s`;
const log = (message: string) => process.stderr.write(`[bench ${elapsed()}] ${message}\n`);
const runId = Date.now().toString(36);
let serial = 0;
const uniqueName = (prefix: string) => `${prefix}-${runId}-${++serial}`;

/** Runs `tasks` with at most `limit` at a time; results in task order. */
async function pool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = Array.from({ length: tasks.length });
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}

/** Rotating order: round 0 A B C, round 1 B C A, round 2 C A B, ... */
const orderFor = (round: number): Client[] => CLIENTS.map((_, i) => CLIENTS[(i + round) % CLIENTS.length]!);

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    })
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- setup

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** `npm run build` (for the Size scenario), unless dist/ is newer than src/. */
function buildLibrary(): Promise<void> {
  const built = join(ROOT, "dist", "index.js");
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(ROOT, "src"))) {
    log("dist/ is newer than src/: skipping npm run build");
    return Promise.resolve();
  }
  log("npm run build (the library, for sizes)");
  return new Promise((done, fail) => {
    const child = spawn("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("exit", (code) => (code === 0 ? done() : fail(new Error(`npm run build failed:\n${output}`))));
  });
}

async function buildPages(): Promise<void> {
  for (const profile of ["0", "1"]) {
    log(profile === "1" ? "vite build (unminified A and B, for profiles)" : "vite build (pages A, B, C)");
    process.env.BENCH_PROFILE = profile;
    await viteBuild({ configFile: join(BENCH, "pages", "vite.config.ts"), logLevel: "error" });
  }
  delete process.env.BENCH_PROFILE;
}

let browser: Browser;
let worker: WorkerServer;
let pages: StaticServer;

interface OpenPage {
  page: Page;
  cdp: CDPSession;
  errors: string[];
  close(): Promise<void>;
}

async function openPage(client: Client, options: { instrument?: boolean; profile?: boolean } = {}): Promise<OpenPage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.length < 5 && errors.push(String(error)));
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const url = `${pages.origin}${options.profile ? "/profile" : ""}/${client.toLowerCase()}.html${options.instrument ? "?instrument" : ""}`;
  await page.goto(url);
  await page.waitForFunction(() => window.bench?.client !== undefined, undefined, { timeout: 20_000 });
  return { page, cdp, errors, close: () => context.close() };
}

async function metrics(cdp: CDPSession): Promise<{ task: number; script: number; layout: number; style: number }> {
  const { metrics: list } = await cdp.send("Performance.getMetrics");
  const value = (name: string) => (list.find((m) => m.name === name)?.value ?? 0) * 1000;
  return { task: value("TaskDuration"), script: value("ScriptDuration"), layout: value("LayoutDuration"), style: value("RecalcStyleDuration") };
}

async function heapAfterGC(cdp: CDPSession): Promise<number> {
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  return usedSize;
}

const agentUrl = (name: string, path: string) => `${worker.origin}/agents/bench-agent/${name}/${path}`;

async function post(name: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(agentUrl(name, path), { method: "POST", body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

async function seed(name: string, count: number): Promise<void> {
  if (count > 0) await post(name, "seed", { count });
}

async function waitForGate(name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const progress = (await (await fetch(agentUrl(name, "progress"))).json()) as { waiting: boolean; emitted: number };
    if (progress.waiting) return;
    if (Date.now() > deadline) throw new Error(`the gated reply never reached half-way (${progress.emitted} chunks)`);
    await sleep(25);
  }
}

// ---------------------------------------------------------------- one measured run

interface FinalRunOptions {
  scenario: string;
  variant?: string;
  client: Client;
  round: number;
  config: MountConfig;
  /** Messages shown once mounted; `null`: the action mounts (nothing is mounted before). */
  expected: number | null;
  marker: string;
  action: { send?: string; mount?: MountConfig };
  beforeStart?: () => Promise<void>;
  profile?: boolean;
  /** Skip the settle and the heap reading (request-bytes runs). */
  light?: boolean;
}

/** BENCH_TRACE=1: also record a Chromium trace of each profiled run. */
const TRACE = process.env.BENCH_TRACE === "1";
/** Trace categories of profiled runs: the renderer's task breakdown. */
const TRACE_CATEGORIES = ["devtools.timeline", "v8.execute", "v8"];

async function finalRun(options: FinalRunOptions): Promise<RunRecord & { profile?: CpuProfile; trace?: Buffer }> {
  const { scenario, variant, client, round } = options;
  const base = { scenario, ...(variant ? { variant } : {}), client, round };
  let opened: OpenPage | undefined;
  try {
    opened = await openPage(client, { profile: options.profile });
    const { page, cdp } = opened;
    if (options.expected !== null) {
      await withTimeout(
        page.evaluate(async ([config, expected]) => {
          window.bench.mount(config);
          await window.bench.ready(expected);
        }, [options.config, options.expected] as const),
        30_000,
        "mount and ready"
      );
    }
    await options.beforeStart?.();
    const tracing = options.profile && TRACE;
    if (tracing) await browser.startTracing(page, { categories: TRACE_CATEGORIES });
    if (options.profile) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
      await cdp.send("Profiler.start");
    }
    const before = await metrics(cdp);
    await page.evaluate(([marker, action]) => window.bench.start(marker, action), [options.marker, options.action] as const);
    const final: FinalText = await withTimeout(
      page.evaluate(() => window.bench.final),
      SETTINGS.finalTimeoutMs,
      `final text ${options.marker}`
    );
    if (!options.light) await sleep(SETTINGS.settleMs);
    const after = await metrics(cdp);
    const settled = await page.evaluate(() => window.bench.counters());
    const profile = options.profile ? ((await cdp.send("Profiler.stop")).profile as CpuProfile) : undefined;
    const trace = tracing ? await browser.stopTracing() : undefined;
    const requestBytes = await page.evaluate(() => window.bench.requestBytes());
    const heap = options.light ? undefined : await heapAfterGC(cdp);
    return {
      ...base,
      ok: true,
      taskMs: after.task - before.task,
      scriptMs: after.script - before.script,
      layoutMs: after.layout - before.layout,
      styleMs: after.style - before.style,
      wallMs: final.ms,
      commits: final.commits,
      records: final.records,
      renders: final.renders,
      commitsSettled: settled.commits,
      rendersSettled: settled.renders,
      ...(heap === undefined ? {} : { heapMB: heap / MB }),
      requestBytes,
      ...(opened.errors.length ? { pageErrors: opened.errors } : {}),
      ...(profile ? { profile } : {}),
      ...(trace ? { trace } : {})
    };
  } catch (error) {
    let detail = "";
    try {
      detail = (await opened?.page.evaluate(() => {
        const last = document.getElementById("chat")?.lastElementChild?.textContent ?? "";
        return ` [messages ${window.bench.messageCount()}, last …${last.slice(-40)}]`;
      })) ?? "";
    } catch {
      // page gone
    }
    log(`  ${scenario}${variant ? `/${variant}` : ""} ${client} round ${round} failed: ${String(error)}${detail}`);
    return { ...base, ok: false, error: `${String(error)}${detail}`, ...(opened?.errors.length ? { pageErrors: opened.errors } : {}) };
  } finally {
    await opened?.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------- scenarios

const host = () => worker.host;

function streamRun(client: Client, round: number, profile = false, chunks = SETTINGS.streamChunks) {
  const tag = uniqueName(`s${client}`);
  return finalRun({
    scenario: "stream",
    client,
    round,
    config: { host: host(), name: tag },
    expected: 0,
    marker: `END-${tag}`,
    action: { send: `stream ${chunks} ${tag}` },
    profile
  });
}

async function replayRun(client: Client, round: number, profile = false) {
  const tag = uniqueName(`r${client}`);
  await post(tag, "server-turn", { text: `stream ${SETTINGS.replayChunks} ${tag} gate` });
  const config = { host: host(), name: tag };
  return finalRun({
    scenario: "replay",
    client,
    round,
    config,
    expected: null,
    marker: `END-${tag}`,
    action: { mount: config },
    beforeStart: () => waitForGate(tag),
    profile
  });
}

async function longRun(client: Client, round: number, stored: number, profile = false) {
  const tag = uniqueName(`l${client}`);
  await seed(tag, stored);
  const record = await finalRun({
    scenario: "long",
    variant: String(stored),
    client,
    round,
    config: { host: host(), name: tag },
    expected: stored,
    marker: `END-${tag}`,
    action: { send: `stream ${SETTINGS.longChunks} ${tag}` },
    profile
  });
  if (record.ok) record.perChunkMs = record.taskMs! / SETTINGS.longChunks;
  return record;
}

async function requestRun(client: Client, round: number, stored: number, onlyNew: boolean) {
  const tag = uniqueName(`q${client}`);
  await seed(tag, stored);
  const record = await finalRun({
    scenario: "request",
    variant: `${client}${client === "A" ? (onlyNew ? "-on" : "-off") : ""}@${stored}`,
    client,
    round,
    config: { host: host(), name: tag, ...(onlyNew ? { sendOnlyNewMessages: true } : {}) },
    expected: stored,
    marker: `END-${tag}`,
    action: { send: `stream 1 ${tag}` },
    light: true
  });
  record.stored = stored;
  record.sendOnlyNewMessages = onlyNew;
  record.bytes = record.requestBytes?.[0];
  return record;
}

async function churnRun(client: Client, round: number): Promise<ChurnRecord> {
  const tag = uniqueName(`c${client}`);
  const base = { scenario: "churn", client, round };
  const expected = SETTINGS.churnTranscript;
  await seed(tag, expected);
  let opened: OpenPage | undefined;
  try {
    opened = await openPage(client, { instrument: true });
    const { page, cdp } = opened;
    const config: MountConfig = { host: host(), name: tag, fastReconnect: true };
    // Warm-up: one cycle, so code, caches and framework roots exist in the baseline.
    await withTimeout(
      page.evaluate(async ([config, expected]) => {
        window.bench.mount(config);
        await window.bench.ready(expected);
        window.bench.unmount();
        await window.bench.sleep(300);
      }, [config, expected] as const),
      30_000,
      "warm-up"
    );
    const heapBefore = await heapAfterGC(cdp);
    const leaksBefore: LeakCounts = await page.evaluate(() => window.bench.leakCounts());
    const t0 = Date.now();
    await withTimeout(
      page.evaluate(async ([config, cycles]) => {
        // Half the cycles unmount once the socket is open (the transcript
        // read may still be in flight), half on the next task (still
        // connecting), as when a user navigates away quickly.
        for (let i = 0; i < cycles; i++) {
          const created = window.bench.socketsCreated();
          window.bench.mount(config);
          if (i % 2 === 0) await window.bench.opened(created);
          else await window.bench.sleep(0);
          window.bench.unmount();
        }
      }, [config, SETTINGS.churnCycles] as const),
      180_000,
      "mount/unmount cycles"
    );
    const cyclesMs = Date.now() - t0;
    await withTimeout(
      page.evaluate(async ([config, expected, drops]) => {
        window.bench.mount(config);
        await window.bench.ready(expected);
        for (let i = 0; i < drops; i++) {
          const created = window.bench.socketsCreated();
          window.bench.dropSockets();
          await window.bench.reconnected(created, expected, 10);
        }
        window.bench.unmount();
        // A closing socket waits for the server's close frame; give it time.
        await window.bench.socketsClosed(3000);
      }, [config, expected, SETTINGS.churnReconnects] as const),
      180_000,
      "forced reconnects"
    );
    const churnMs = Date.now() - t0;
    const heapAfter = await heapAfterGC(cdp);
    const leaks: LeakCounts = await page.evaluate(() => window.bench.leakCounts());
    return {
      ...base,
      ok: true,
      heapGrowthMB: (heapAfter - heapBefore) / MB,
      heapMB: heapAfter / MB,
      openSockets: leaks.openSockets,
      liveListeners: leaks.liveListeners - leaksBefore.liveListeners,
      closedSocketListeners: leaks.closedSocketListeners,
      pendingTimers: leaks.pendingTimers - leaksBefore.pendingTimers,
      intervals: leaks.intervals - leaksBefore.intervals,
      socketsCreated: leaks.socketsCreated - leaksBefore.socketsCreated,
      timerSites: leaks.timerSites.slice(0, 5),
      liveListenerTypes: newEntries(leaksBefore.liveListenerTypes, leaks.liveListenerTypes).slice(0, 5),
      cyclesMs,
      churnMs,
      ...(opened.errors.length ? { pageErrors: opened.errors } : {})
    };
  } catch (error) {
    log(`  churn ${client} round ${round} failed: ${String(error)}`);
    return { ...base, ok: false, error: String(error), ...(opened?.errors.length ? { pageErrors: opened.errors } : {}) };
  } finally {
    await opened?.close().catch(() => undefined);
  }
}

/** Entries of `after` that were not in `before` (listener descriptions). */
function newEntries(before: string[], after: string[]): string[] {
  const seen = new Set(before);
  return after.filter((entry) => !seen.has(entry));
}

async function sizes(): Promise<SizeResults> {
  const ours = join(ROOT, "dist", "index.js");
  const upstream = join(ROOT, "node_modules", "agents", "dist", "chat", "react.js");
  return {
    ours: await moduleSize(ours),
    upstream: await moduleSize(upstream),
    oursUseAgentChat: await bundleSize(ours, ["useAgentChat"]),
    upstreamUseAgentChat: await bundleSize(upstream, ["useAgentChat"]),
    oursUseAgent: await bundleSize(ours, ["useAgent"]),
    breakdown: await sourceBreakdown(join(ROOT, "src", "index.ts"), ROOT),
    pages: {
      A: pageSize(DIST, "a.html"),
      B: pageSize(DIST, "b.html"),
      C: pageSize(DIST, "c.html")
    }
  };
}

// ---------------------------------------------------------------- main

function summaryLine(records: RunRecord[]): string {
  return records
    .map((r) => `${r.client}${r.variant ? `/${r.variant}` : ""} ${r.ok ? `${(r.taskMs ?? 0).toFixed(0)}ms task, ${(r.wallMs ?? 0).toFixed(0)}ms wall` : "FAILED"}`)
    .join(" · ");
}

async function main(): Promise<void> {
  log("starting the bench worker (wrangler dev) while building");
  const starting = startWorker({ configPath: join(BENCH, "worker", "wrangler.jsonc"), logFile: join(TMP, "wrangler.log") });
  starting.catch(() => undefined);
  await buildLibrary();
  await buildPages();
  worker = await starting;
  pages = await serveStatic({ "/": DIST, "/profile/": DIST_PROFILE });
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: [...chromiumArgs, "--enable-precise-memory-info"]
  });
  browserVersion = browser.version();
  const records: RunRecord[] = [];
  const profiles: ProfileResult[] = [];
  try {
    // A throwaway run per client warms wrangler's isolate and the browser.
    log("warm-up");
    for (const client of CLIENTS) await streamRun(client, -1, false, 200);

    if (runs("stream")) {
      for (let round = 0; round < ROUNDS; round++) {
        const batch: RunRecord[] = [];
        for (const client of orderFor(round)) batch.push(await streamRun(client, round));
        records.push(...batch);
        log(`stream round ${round + 1}/${ROUNDS}: ${summaryLine(batch)}`);
      }
    }
    if (runs("replay")) {
      for (let round = 0; round < ROUNDS; round++) {
        const batch: RunRecord[] = [];
        for (const client of orderFor(round)) batch.push(await replayRun(client, round));
        records.push(...batch);
        log(`replay round ${round + 1}/${ROUNDS}: ${summaryLine(batch)}`);
      }
    }
    if (runs("long")) {
      for (let round = 0; round < ROUNDS; round++) {
        const batch: RunRecord[] = [];
        for (const client of orderFor(round)) {
          for (const stored of round % 2 ? [SETTINGS.longLong, SETTINGS.longShort] : [SETTINGS.longShort, SETTINGS.longLong]) {
            batch.push(await longRun(client, round, stored));
          }
        }
        records.push(...batch);
        log(`long round ${round + 1}/${ROUNDS}: ${summaryLine(batch)}`);
      }
    }
    // Churn and request bytes report counts, heap and bytes, not timings:
    // they run side by side, each run in its own browser context (renderer,
    // heap); the three churn runs of a round at the same time, request runs
    // three at a time.
    const churnRounds = async () => {
      if (!runs("churn")) return;
      for (let round = 0; round < ROUNDS; round++) {
        const batch = await pool(orderFor(round).map((client) => () => churnRun(client, round)), 3);
        records.push(...batch);
        log(
          `churn round ${round + 1}/${ROUNDS}: ${batch
            .map((r) => `${r.client} ${r.ok ? `+${r.heapGrowthMB!.toFixed(2)}MB sockets ${r.openSockets} listeners ${r.liveListeners} timers ${r.pendingTimers} (${(r.churnMs! / 1000).toFixed(1)}s)` : "FAILED"}`)
            .join(" · ")}`
        );
      }
    };
    const requestRounds = async () => {
      if (!runs("request")) return;
      for (let round = 0; round < ROUNDS; round++) {
        const tasks: Array<() => Promise<RunRecord>> = [];
        for (const stored of REQUEST_SIZES) {
          for (const client of orderFor(round)) {
            if (client === "A") {
              tasks.push(() => requestRun("A", round, stored, false));
              tasks.push(() => requestRun("A", round, stored, true));
            } else if (client === "B") tasks.push(() => requestRun("B", round, stored, false));
          }
        }
        const batch = await pool(tasks, 3);
        records.push(...batch);
        log(`request round ${round + 1}/${ROUNDS}: ${batch.map((r) => `${r.variant} ${r.bytes ?? "?"}B`).join(" · ")}`);
      }
    };
    await Promise.all([churnRounds(), requestRounds()]);

    // Profile A's worst streaming scenario, and B in the same scenario for
    // contrast; and A's long transcript when its own target is missed.
    const worst = process.env.BENCH_PROFILE_SCENARIO ?? worstScenario(records);
    const plan: Array<{ scenario: string; client: Client }> = worst ? (["A", "B"] as const).map((client) => ({ scenario: worst, client })) : [];
    if (worst !== "long" && longRatio(records) > 1.5) plan.push({ scenario: "long", client: "A" });
    const bundles = new Map<string, string>();
    const manifest = JSON.parse(readFileSync(join(DIST_PROFILE, ".vite", "manifest.json"), "utf8")) as Record<string, { file: string }>;
    for (const chunk of Object.values(manifest)) {
      if (chunk.file.endsWith(".js")) bundles.set(chunk.file, readFileSync(join(DIST_PROFILE, chunk.file), "utf8"));
    }
    for (const { scenario, client } of plan) {
      log(`profiling ${client} in ${scenario}`);
      const record =
        scenario === "stream"
          ? await streamRun(client, -2, true)
          : scenario === "replay"
            ? await replayRun(client, -2, true)
            : await longRun(client, -2, SETTINGS.longLong, true);
      if (!record.ok || !record.profile) continue;
      profiles.push({
        scenario: scenario === "long" ? `long@${SETTINGS.longLong}` : scenario,
        client,
        summary: summarizeProfile(record.profile, bundles),
        ...(record.trace ? { trace: summarizeTrace(record.trace) } : {})
      });
      // Open in Chrome DevTools (Performance panel) for the full picture.
      writeFileSync(join(TMP, `profile-${client}-${scenario}.cpuprofile`), JSON.stringify(record.profile));
    }
  } finally {
    await browser.close().catch(() => undefined);
    await pages.close().catch(() => undefined);
    await worker.stop().catch(() => undefined);
  }

  log("sizes");
  const sizeResults = await sizes();
  const results: Results = {
    meta: {
      date: new Date().toISOString(),
      commit: gitCommit(),
      node: process.version,
      chromium: browserVersion,
      cpus: cpus().length,
      loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
      rounds: ROUNDS,
      durationS: Math.round((Date.now() - started) / 1000),
      settings: SETTINGS
    },
    runs: records.map(({ profile: _profile, trace: _trace, ...rest }) => rest),
    sizes: sizeResults,
    targets: [],
    profiles
  };
  const partial = ONLY.size > 0 || ROUNDS < 5;
  const report = renderReport(results);
  results.targets = report.targets;
  const out = partial ? TMP : BENCH;
  writeFileSync(join(out, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(out, "chart.svg"), report.chart);
  if (!partial) report.writeBenchmarks(join(BENCH, "BENCHMARKS.md"));
  process.stdout.write(`${report.markdown}\n`);
  log(`done in ${results.meta.durationS}s; wrote ${join(out, "results.json")}${partial ? " (partial run: BENCHMARKS.md untouched)" : ", chart.svg, BENCHMARKS.md"}`);
}

/** A's median per-round ratio of per-chunk cost, long transcript over short. */
function longRatio(records: RunRecord[]): number {
  const perChunk = (stored: number) =>
    new Map(records.filter((r) => r.scenario === "long" && r.client === "A" && r.variant === String(stored) && r.ok && r.round >= 0).map((r) => [r.round, r.perChunkMs as number]));
  const long = perChunk(SETTINGS.longLong);
  const short = perChunk(SETTINGS.longShort);
  const ratios = [...long].filter(([round]) => short.has(round)).map(([round, ms]) => ms / short.get(round)!).toSorted((a, b) => a - b);
  return ratios.length ? ratios[Math.floor(ratios.length / 2)]! : 0;
}

/** The streaming scenario where A is furthest from its TaskDuration targets. */
function worstScenario(records: RunRecord[]): string | null {
  let worst: string | null = null;
  let worstFactor = -Infinity;
  for (const [scenario, variant] of [["stream", undefined], ["replay", undefined], ["long", String(SETTINGS.longLong)]] as const) {
    const task = (client: Client) => {
      const xs = records
        .filter((r) => r.scenario === scenario && r.variant === variant && r.client === client && r.ok)
        .map((r) => r.taskMs!)
        .toSorted((a, b) => a - b);
      return xs.length ? xs[Math.floor(xs.length / 2)]! : null;
    };
    const a = task("A");
    const b = task("B");
    const c = task("C");
    if (a === null) continue;
    const factor = Math.max(b ? a / b / 0.6 : 0, c ? a / c / 1.4 : 0);
    if (factor > worstFactor) {
      worstFactor = factor;
      worst = scenario;
    }
  }
  return worst;
}

function gitCommit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/** Re-renders the report from bench/results.json (after editing the report code). */
async function reportOnly(): Promise<void> {
  const results = JSON.parse(readFileSync(join(BENCH, "results.json"), "utf8")) as Results;
  results.sizes = await sizes();
  const report = renderReport(results);
  results.targets = report.targets;
  writeFileSync(join(BENCH, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(BENCH, "chart.svg"), report.chart);
  report.writeBenchmarks(join(BENCH, "BENCHMARKS.md"));
  process.stdout.write(`${report.markdown}\n`);
}

let browserVersion = "";
(process.env.BENCH_REPORT_ONLY === "1" ? reportOnly() : main())
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
