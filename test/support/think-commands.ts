/**
 * Browser commands (run in the vitest process, in Node) that start and stop
 * the Think fixture worker (`test/fixtures/worker/wrangler.think.jsonc`): a
 * `wrangler dev` of its own, started only by the tests that talk to a real
 * `@cloudflare/think` agent, so the shared fixture worker stays small.
 */
import { join } from "node:path";
import type { BrowserCommand } from "vitest/node";
import { DEFAULT_CONFIG_PATH, startWorkerTwice, type WorkerServer } from "./wrangler.ts";

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

/** How long one `wrangler dev` of the Think worker may take to answer: its bundle is several MB, so a loaded machine needs a while. */
const THINK_READY_MS = 100_000;

/**
 * Starts the Think worker; a start that never gets ready (probably what made
 * a CI run skip every Think test; its output was not kept) is stopped and
 * tried once more on a fresh port, saying so on stderr with what the first
 * one printed.
 */
async function startThink(): Promise<WorkerServer> {
  return startWorkerTwice({ configPath: THINK_CONFIG_PATH, logFile: process.env.WRANGLER_LOG, readyTimeoutMs: THINK_READY_MS }, "think-commands");
}

const thinkServerStart: BrowserCommand<[]> = async () => {
  server ??= startThink();
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
