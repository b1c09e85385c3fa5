/**
 * Browser commands of the chaos suite (they run in the vitest process, in
 * Node): the seed and size of the run, the figures file, and a `wrangler dev`
 * the suite owns so it can stop and restart it on the same port and persist
 * dir while a browser test streams from it.
 *
 * Registered in both configs (`vitest.config.ts` for the quick variant inside
 * `npm test`, `vitest.chaos.config.ts` for `npm run test:chaos`).
 */
import { appendFileSync } from "node:fs";
import type { BrowserCommand } from "vitest/node";
import { startWorker, type WorkerServer } from "./wrangler.ts";

/** One trial's figures, as the runner aggregates them. */
export interface ChaosRecord {
  scenario: string;
  trials: number;
  faults: number;
  survived: number;
  lost: number;
  duplicated: number;
  stuck: number;
  /** Failed checks that are neither lost, duplicated nor stuck (a leak, a throw, an executed tool). */
  other: number;
  /** Repeated text the server itself stored, which the client shows as stored (not a client failure). */
  upstream: number;
  notes?: string[];
  upstreamNotes?: string[];
  /** How the clients learned the transcript, counted from the agent's log: HTTP reads, snapshot requests, connections. */
  sync?: { reads: number; snapshots: number; connects: number };
}

export interface ChaosSettings {
  seed: number;
  full: boolean;
}

declare module "vitest/browser" {
  interface BrowserCommands {
    chaosSettings: () => Promise<ChaosSettings>;
    chaosRecord: (record: ChaosRecord) => Promise<void>;
    chaosServerStart: () => Promise<{ host: string; origin: string }>;
    chaosServerRestart: (downMs: number) => Promise<{ host: string; origin: string; restartMs: number }>;
    /** Stops the chaos server: the agent is unreachable until `chaosServerUp`. */
    chaosServerDown: () => Promise<void>;
    /** Starts it again on the same port and persist dir (a no-op when it runs); how long the start took. */
    chaosServerUp: () => Promise<{ host: string; origin: string; startMs: number }>;
    chaosServerStop: () => Promise<void>;
  }
}

/** The quick variant's seed inside `npm test` when no `SEED` is given (the full run draws one). */
export const QUICK_SEED = 20_260_614;

// One seed per vitest process, so every file of a run shares it.
const seed = (() => {
  const given = process.env.SEED;
  if (given && /^\d+$/.test(given)) return Number(given) >>> 0;
  return process.env.CHAOS_FULL === "1" ? Math.floor(Math.random() * 2 ** 31) : QUICK_SEED;
})();

let server: WorkerServer | undefined;
/** Where the chaos server ran, while `chaosServerDown` keeps it stopped. */
let stopped: { port: number; persistTo: string } | undefined;

const address = (s: WorkerServer) => ({ host: s.host, origin: s.origin });

const chaosSettings: BrowserCommand<[]> = () => ({ seed, full: process.env.CHAOS_FULL === "1" });

const chaosRecord: BrowserCommand<[ChaosRecord]> = (_context, record) => {
  const file = process.env.CHAOS_FIGURES;
  if (file) appendFileSync(file, `${JSON.stringify(record)}\n`);
};

const chaosServerStart: BrowserCommand<[]> = async () => {
  server ??= await startWorker({ logFile: process.env.WRANGLER_LOG });
  return address(server);
};

const chaosServerRestart: BrowserCommand<[number]> = async (_context, downMs) => {
  if (!server) throw new Error("chaosServerRestart: no chaos server is running");
  const { port, persistTo } = server;
  const started = Date.now();
  await server.stop();
  server = undefined;
  if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
  server = await startWorker({ port, persistTo, logFile: process.env.WRANGLER_LOG });
  return { ...address(server), restartMs: Date.now() - started };
};

const chaosServerDown: BrowserCommand<[]> = async () => {
  if (!server) throw new Error("chaosServerDown: no chaos server is running");
  stopped = { port: server.port, persistTo: server.persistTo };
  await server.stop();
  server = undefined;
};

const chaosServerUp: BrowserCommand<[]> = async () => {
  const started = Date.now();
  if (!server) {
    if (!stopped) throw new Error("chaosServerUp: the chaos server was never taken down");
    server = await startWorker({ ...stopped, logFile: process.env.WRANGLER_LOG });
    stopped = undefined;
  }
  return { ...address(server), startMs: Date.now() - started };
};

const chaosServerStop: BrowserCommand<[]> = async () => {
  await server?.stop();
  server = undefined;
  stopped = undefined;
};

export const chaosCommands = {
  chaosSettings,
  chaosRecord,
  chaosServerStart,
  chaosServerRestart,
  chaosServerDown,
  chaosServerUp,
  chaosServerStop
};
