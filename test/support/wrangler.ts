/**
 * Start and stop the fixture worker with `wrangler dev` (offline, local
 * Durable Objects). Plain Node 22; used by vitest globalSetup, the demo
 * script, benchmarks and the chaos suite (which restarts on the same port and
 * persist dir).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { STARTUP_TIMEOUTS, StartupTimeoutError } from "./startup.ts";

// Colour codes wrangler prints despite NO_COLOR on some paths.
// oxlint-disable-next-line no-control-regex -- matching the ESC character is the point
const ANSI_COLOR = /\x1b\[[0-9;]*m/g;

export interface WorkerServer {
  /** `http://127.0.0.1:P` */
  origin: string;
  /** `127.0.0.1:P` */
  host: string;
  port: number;
  /** Process id of wrangler (also its process group id). */
  pid: number;
  persistTo: string;
  /** SIGTERM the process group, SIGKILL after 5 s; waits until the port is
   * released. Idempotent. */
  stop(): Promise<void>;
  /** The last ~200 lines wrangler printed (stdout and stderr). */
  recentOutput(): string;
}

export interface StartWorkerOptions {
  /** Default: the fixture's wrangler.jsonc. */
  configPath?: string;
  /** Default: a free port. */
  port?: number;
  /** Default: a fresh temp dir. */
  persistTo?: string;
  /** Append wrangler's stdout/stderr here. */
  logFile?: string;
  /** How long `wrangler dev` may take to answer `/health` (the step "wrangler dev ready"). Default 90000. */
  readyTimeoutMs?: number;
  /** The script run as wrangler (with Node). Default the repo's `wrangler`; tests give a fake that never gets ready. */
  wranglerBin?: string;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, "..", "..");
const BIN_DIR = join(REPO_ROOT, "node_modules", ".bin");
const WRANGLER_BIN = join(BIN_DIR, "wrangler");
export const DEFAULT_CONFIG_PATH = join(REPO_ROOT, "test", "fixtures", "worker", "wrangler.jsonc");
const HOST = "127.0.0.1";
const MAX_LINES = 200;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolvePort(port) : reject(new Error("no port"))));
    });
  });
}

function canBind(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.unref();
    server.once("error", () => done(false));
    server.listen({ port, host: HOST, exclusive: true }, () => server.close(() => done(true)));
  });
}

async function waitPortFree(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await canBind(port)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

/** Node ≥ 22 is needed by wrangler; prefer the one running us. */
function nodeBinary(): string {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= 22) return process.execPath;
  const local = join(BIN_DIR, "node");
  return existsSync(local) ? local : process.execPath;
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

// Kill leftover servers if the host process exits without stopping them.
// The servers run in their own process group (so they can be stopped as a
// group), which also means a terminal's Ctrl-C does not reach them.
const running = new Set<number>();
let exitHookInstalled = false;
function killAll(): void {
  for (const pid of running) signalGroup(pid, "SIGKILL");
  running.clear();
}
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", killAll);
  // Only when nobody else handles the signal (plain scripts): clean up, then
  // re-raise so the default behaviour (exit) still happens. Test runners keep
  // their own handlers and stop servers in their teardown.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    if (process.listenerCount(signal) > 0) continue;
    const onSignal = () => {
      killAll();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

class EarlyExitError extends Error {}

export async function startWorker(options: StartWorkerOptions = {}): Promise<WorkerServer> {
  const persistTo = resolve(
    options.persistTo ?? (await mkdtemp(join(tmpdir(), "agents-vue-worker-")))
  );
  mkdirSync(persistTo, { recursive: true });
  // A port picked by freePort() can be taken by someone else before wrangler
  // binds it; retry with a fresh one when wrangler dies early.
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await launch({ ...options, port, persistTo });
    } catch (error) {
      const portClash = error instanceof EarlyExitError && /EADDRINUSE|address already in use/i.test(error.message);
      if (!portClash || attempt >= attempts) throw error;
    }
  }
}

/**
 * Starts a worker, and once more when the first start never gets ready: a rare `wrangler dev` that hangs on a
 * loaded machine (CI lost a run of the Think tests and one of the persist tests' restarts to it). The hung start
 * is stopped, and what it printed goes to stderr with `label`, so a hang that repeats can be read.
 */
export async function startWorkerTwice(options: StartWorkerOptions, label: string): Promise<WorkerServer> {
  try {
    return await startWorker(options);
  } catch (error) {
    if (!(error instanceof StartupTimeoutError)) throw error;
    console.warn(`[${label}] wrangler dev did not get ready; starting it once more.\n${error.message}`);
    return startWorker(options);
  }
}

async function launch(
  options: StartWorkerOptions & { port: number; persistTo: string }
): Promise<WorkerServer> {
  const configPath = resolve(options.configPath ?? DEFAULT_CONFIG_PATH);
  const readyTimeoutMs = options.readyTimeoutMs ?? STARTUP_TIMEOUTS.wranglerReadyMs;
  const { port, persistTo } = options;
  if (!existsSync(configPath)) throw new Error(`startWorker: no wrangler config at ${configPath}`);
  const origin = `http://${HOST}:${port}`;
  const host = `${HOST}:${port}`;

  if (!(await waitPortFree(port, 10_000))) {
    throw new Error(`startWorker: port ${port} is still in use`);
  }

  const lines: string[] = [];
  let partial = "";
  let logStream: WriteStream | undefined;
  if (options.logFile) {
    mkdirSync(dirname(resolve(options.logFile)), { recursive: true });
    logStream = createWriteStream(options.logFile, { flags: "a" });
  }
  const record = (chunk: Buffer) => {
    logStream?.write(chunk);
    partial += chunk.toString("utf8");
    const parts = partial.split(/\r?\n/);
    partial = parts.pop() ?? "";
    for (const line of parts) {
      lines.push(line.replace(ANSI_COLOR, ""));
      if (lines.length > MAX_LINES) lines.shift();
    }
  };
  const recentOutput = () =>
    [...lines, partial.replace(ANSI_COLOR, "")].filter((l) => l !== "").join("\n");

  const args = [
    options.wranglerBin ?? WRANGLER_BIN,
    "dev",
    "--config",
    configPath,
    "--local",
    "--ip",
    HOST,
    "--port",
    String(port),
    "--inspector-port",
    "0",
    "--persist-to",
    persistTo,
    "--show-interactive-dev-session=false"
  ];
  const child: ChildProcess = spawn(nodeBinary(), args, {
    cwd: dirname(configPath),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PATH: `${BIN_DIR}${process.platform === "win32" ? ";" : ":"}${process.env.PATH ?? ""}`,
      CI: "1",
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_SEND_ERROR_REPORTS: "false",
      WRANGLER_HIDE_BANNER: "true",
      DO_NOT_TRACK: "1",
      NO_COLOR: "1",
      FORCE_COLOR: "0",
      // Keep concurrent servers from seeing each other through the shared
      // dev registry.
      WRANGLER_REGISTRY_PATH: join(persistTo, ".registry")
    }
  });
  child.stdout?.on("data", record);
  child.stderr?.on("data", record);
  let spawnError: Error | undefined;
  child.once("error", (error) => {
    spawnError = error;
  });
  const pid = child.pid;
  if (pid === undefined) {
    await sleep(0);
    logStream?.end();
    throw new Error(`startWorker: failed to spawn wrangler: ${spawnError?.message ?? "unknown error"}`);
  }
  running.add(pid);
  installExitHook();

  let exited = child.exitCode !== null || child.signalCode !== null;
  let exitInfo = "";
  const exitPromise = new Promise<void>((done) => {
    child.once("exit", (code, signal) => {
      exited = true;
      exitInfo = `code ${code ?? "null"}, signal ${signal ?? "null"}`;
      done();
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const deadline = Date.now() + 5_000;
      if (!exited) signalGroup(pid, "SIGTERM");
      await Promise.race([exitPromise, sleep(Math.max(0, deadline - Date.now()))]);
      // Give the rest of the group (workerd) the remaining time, then force.
      while (groupAlive(pid) && Date.now() < deadline) await sleep(50);
      if (!exited || groupAlive(pid)) signalGroup(pid, "SIGKILL");
      await Promise.race([exitPromise, sleep(2_000)]);
      running.delete(pid);
      await waitPortFree(port, 5_000);
      await new Promise<void>((done) => (logStream ? logStream.end(done) : done()));
    })();
    return stopping;
  };

  const server: WorkerServer = { origin, host, port, pid, persistTo, stop, recentOutput };

  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) {
      await stop();
      throw new EarlyExitError(
        `startWorker: wrangler exited before becoming ready (${exitInfo})\n${recentOutput()}`
      );
    }
    try {
      const res = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() >= deadline) {
      await stop();
      throw new StartupTimeoutError(
        "wrangler dev ready",
        readyTimeoutMs,
        `${origin}/health never answered 200 (wrangler pid ${pid} stopped). Its last output:\n${recentOutput() || "(nothing)"}`
      );
    }
    await sleep(150);
  }
}
