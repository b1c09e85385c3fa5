/**
 * Starts a built Nuxt app (`.output/server/index.mjs`) on 127.0.0.1 for the
 * scripts that check it in a browser. Plain Node 22.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { freePort } from "./wrangler.ts";

export interface NitroServer {
  origin: string;
  child: ChildProcess;
  /** Everything the server printed so far. */
  output(): string;
  stop(): void;
}

/** Starts the built server of the Nuxt app in `appDir`; resolves once `/` answers. */
export async function startNitro(appDir: string, env: NodeJS.ProcessEnv): Promise<NitroServer> {
  const host = "127.0.0.1";
  const port = await freePort();
  let output = "";
  const child = spawn(process.execPath, [join(appDir, ".output", "server", "index.mjs")], {
    cwd: appDir,
    env: { ...env, HOST: host, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const origin = `http://${host}:${port}`;
  const server: NitroServer = { origin, child, output: () => output, stop: () => void child.kill("SIGTERM") };
  // The first render loads the page's modules and reads a transcript: on a busy machine it takes seconds.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Nitro server exited (${child.exitCode}):\n${output}`);
    try {
      await fetch(origin, { signal: AbortSignal.timeout(15_000) }).then((response) => response.arrayBuffer());
      return server;
    } catch {
      if (Date.now() > deadline) {
        server.stop();
        throw new Error(`the Nitro server did not answer within 60 s:\n${output}`);
      }
      await new Promise((wait) => setTimeout(wait, 150));
    }
  }
}
