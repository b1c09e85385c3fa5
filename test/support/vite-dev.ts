/**
 * Starts an app's own `vite dev` on 127.0.0.1 (the starter's: the Vue app and
 * its Worker in one process, through @cloudflare/vite-plugin) and stops it
 * with its whole process group (workerd included). Plain Node 22.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./wrangler.ts";

export interface ViteDevServer {
  origin: string;
  child: ChildProcess;
  /** Everything the server printed so far. */
  output(): string;
  /** SIGTERM the process group; SIGKILL after 5 s. Resolves once it exited. */
  stop(): Promise<void>;
}

/** Runs `vite` from `appDir`'s node_modules; resolves once `/` answers 200. */
export async function startViteDev(appDir: string, env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<ViteDevServer> {
  const port = await freePort();
  let output = "";
  const child = spawn(process.execPath, [realpathSync(join(appDir, "node_modules", ".bin", "vite")), "--host", "127.0.0.1", "--port", String(port), "--strictPort"], {
    cwd: appDir,
    // The app's own config decides about the Request.cf download (the starter's turns it off), as under `npm run dev`.
    env: { ...env, WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const origin = `http://127.0.0.1:${port}`;
  const server: ViteDevServer = { origin, child, output: () => output, stop };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vite dev exited (${child.exitCode}):\n${output}`);
    try {
      const response = await fetch(origin, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      if (response.ok) return server;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`vite dev did not answer within ${timeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((wait) => setTimeout(wait, 250));
  }
}
