/**
 * Browser commands (run in the vitest process, in Node) that start and stop
 * the Think fixture worker (`test/fixtures/worker/wrangler.think.jsonc`): a
 * `wrangler dev` of its own, started only by the tests that talk to a real
 * `@cloudflare/think` agent, so the shared fixture worker stays small.
 */
import { join } from "node:path";
import type { BrowserCommand } from "vitest/node";
import { DEFAULT_CONFIG_PATH, startWorker, type WorkerServer } from "./wrangler.ts";

declare module "vitest/browser" {
  interface BrowserCommands {
    /** Starts the Think worker once per run (later calls reuse it); resolves with its address. */
    thinkServerStart: () => Promise<{ host: string; origin: string }>;
    /** Stops the Think worker, if one is running. */
    thinkServerStop: () => Promise<void>;
  }
}

/** The Think fixture worker's wrangler config. */
export const THINK_CONFIG_PATH = join(DEFAULT_CONFIG_PATH, "..", "wrangler.think.jsonc");

let server: Promise<WorkerServer> | undefined;

const thinkServerStart: BrowserCommand<[]> = async () => {
  // Think's bundle is several MB: give a loaded machine time to start it.
  server ??= startWorker({ configPath: THINK_CONFIG_PATH, logFile: process.env.WRANGLER_LOG, readyTimeoutMs: 180_000 });
  try {
    const started = await server;
    return { host: started.host, origin: started.origin };
  } catch (error) {
    server = undefined;
    throw error;
  }
};

const thinkServerStop: BrowserCommand<[]> = async () => {
  const running = server;
  server = undefined;
  await (await running?.catch(() => undefined))?.stop();
};

export const thinkCommands = { thinkServerStart, thinkServerStop };
