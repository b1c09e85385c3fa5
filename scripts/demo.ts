/**
 * `npm run demo`: the chat demo, offline.
 *
 * 1. starts the demo's AIChatAgent (`examples/chat/worker`) under `wrangler dev`
 *    on a free port (via test/support/wrangler.ts); with `DEMO_AGENT=think`, a
 *    `Think` agent under the same name (`worker/wrangler.think.jsonc`) instead;
 * 2. starts Vite for `examples/chat` on 127.0.0.1 (`PORT`, else 5173, else a
 *    free port), proxying `/agents/*` — HTTP and WebSocket — to that worker, so
 *    the page talks to its agent same-origin, as it would when deployed;
 * 3. prints the URL; Ctrl-C / SIGTERM closes Vite and stops wrangler by pid.
 *
 * `startDemo()` is also used by scripts/demo-check.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createServer, type ViteDevServer } from "vite";
import { freePort, startWorker, type WorkerServer } from "../test/support/wrangler.ts";
import { demoLogger } from "../examples/chat/vite.config.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const EXAMPLE_DIR = join(ROOT, "examples", "chat");
/** Which agent serves the page: the `AIChatAgent` (default) or, with `DEMO_AGENT=think`, a `Think` agent. */
export type DemoAgent = "ai-chat" | "think";
const WORKER_CONFIGS: Record<DemoAgent, string> = {
  "ai-chat": join(EXAMPLE_DIR, "worker", "wrangler.jsonc"),
  think: join(EXAMPLE_DIR, "worker", "wrangler.think.jsonc")
};
const HOST = "127.0.0.1";
const DEFAULT_PORT = 5173;

export interface Demo {
  /** The page, e.g. `http://127.0.0.1:5173/`. */
  url: string;
  /** The agent's `wrangler dev` (replaced by `startAgent`). */
  readonly worker: WorkerServer;
  vite: ViteDevServer;
  /** Stops the agent's worker: pages see their sockets drop (an outage, a deploy). */
  stopAgent(): Promise<void>;
  /** Starts the agent's worker again, on the same port and storage. */
  startAgent(): Promise<void>;
  /** Closes Vite and stops wrangler (by pid). Idempotent. */
  stop(): Promise<void>;
}

export interface StartDemoOptions {
  /** Vite's port. Default: `PORT`, else 5173, else a free port. */
  port?: number;
  /** Where wrangler keeps the agents' storage. Default: a fresh temp dir. */
  persistTo?: string;
  /** Append wrangler's output here. */
  logFile?: string;
  /** Vite's log level. Default "info". */
  logLevel?: "info" | "warn" | "error" | "silent";
  /** Watch files and hot-reload the page (the library's source too). Default true. */
  watch?: boolean;
  /** The agent behind the page. Default: `DEMO_AGENT` (`think`), else the `AIChatAgent`. */
  agent?: DemoAgent;
}

export async function startDemo(options: StartDemoOptions = {}): Promise<Demo> {
  const agent = options.agent ?? (process.env.DEMO_AGENT === "think" ? "think" : "ai-chat");
  const WORKER_CONFIG = WORKER_CONFIGS[agent];
  // Think's bundle is several MB: a loaded machine needs longer to start it.
  const readyTimeoutMs = agent === "think" ? 180_000 : undefined;
  let worker = await startWorker({ configPath: WORKER_CONFIG, persistTo: options.persistTo, logFile: options.logFile, readyTimeoutMs });
  let vite: ViteDevServer | undefined;
  try {
    const port = await pickPort(options.port ?? (Number(process.env.PORT) || DEFAULT_PORT));
    vite = await createServer({
      configFile: join(EXAMPLE_DIR, "vite.config.ts"),
      root: EXAMPLE_DIR,
      customLogger: demoLogger(options.logLevel ?? "info"),
      server: {
        host: HOST,
        port,
        strictPort: true,
        ...(options.watch === false ? { watch: null, hmr: false } : {}),
        // Overrides the config's default target (wrangler's usual :8787).
        proxy: { "/agents": { target: worker.origin, ws: true, changeOrigin: true } }
      }
    });
    await vite.listen();
  } catch (error) {
    await vite?.close().catch(() => undefined);
    await worker.stop();
    throw error;
  }
  const server = vite;
  const address = server.httpServer?.address();
  const port = typeof address === "object" && address ? address.port : 0;

  let stopping: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${port}/`,
    get worker() {
      return worker;
    },
    vite: server,
    stopAgent: () => worker.stop(),
    async startAgent() {
      await worker.stop();
      const { port: agentPort, persistTo } = worker;
      worker = await startWorker({ configPath: WORKER_CONFIG, port: agentPort, persistTo, logFile: options.logFile, readyTimeoutMs });
    },
    stop: () => (stopping ??= Promise.allSettled([server.close(), worker.stop()]).then(() => undefined))
  };
}

/** `preferred` when it is free on 127.0.0.1, else any free port. */
async function pickPort(preferred: number): Promise<number> {
  const free = await new Promise<boolean>((done) => {
    const probe = createNetServer();
    probe.once("error", () => done(false));
    probe.listen({ port: preferred, host: HOST, exclusive: true }, () => probe.close(() => done(true)));
  });
  return free ? preferred : freePort();
}

/** Which model the worker will use, from `worker/.dev.vars` (for the banner only). */
function modelDescription(): string {
  const devVars = join(EXAMPLE_DIR, "worker", ".dev.vars");
  const provider = existsSync(devVars)
    ? /^\s*AI_PROVIDER\s*=\s*"?([\w-]+)"?/m.exec(readFileSync(devVars, "utf8"))?.[1]
    : undefined;
  return !provider || provider === "scripted" ? "scripted (offline, no API key)" : `${provider} (from worker/.dev.vars)`;
}

const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[22m` : text);
const green = (text: string) => (process.stdout.isTTY ? `\x1b[32m${text}\x1b[39m` : text);

async function main(): Promise<void> {
  let demo: Demo | undefined;
  let exiting = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (exiting) return;
    exiting = true;
    console.log(`\n  ${signal}: stopping the demo…`);
    // Without a demo yet, exiting runs startWorker's exit hook, which kills wrangler.
    void (demo?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  };
  // Installed before startWorker, which then leaves the signals to us.
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  process.on("SIGHUP", shutdown);

  console.log("  Starting the agent (wrangler dev) and the page (Vite)…");
  const logFile = join(EXAMPLE_DIR, "worker", ".wrangler", "demo.log");
  demo = await startDemo({
    // Conversations survive restarts of the demo (git-ignored).
    persistTo: join(EXAMPLE_DIR, "worker", ".wrangler", "demo-state"),
    logFile
  });
  console.log(
    [
      "",
      `  ${bold("agents-vue chat demo")}`,
      "",
      `  ${green("➜")}  Open:   ${bold(demo.url)}`,
      `     Agent:  ChatAgent${process.env.DEMO_AGENT === "think" ? " (Think)" : ""} on ${demo.worker.origin} (wrangler dev, pid ${demo.worker.pid})`,
      `     Model:  ${modelDescription()}`,
      `     Logs:   ${logFile}`,
      "",
      "  Open it in two tabs to see them sync. Ctrl-C to stop.",
      ""
    ].join("\n")
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
