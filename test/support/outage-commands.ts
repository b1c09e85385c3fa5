/**
 * Browser commands (run in the vitest process, in Node) that give a browser
 * test an agent it can take down and bring back: a `wrangler dev` of the
 * fixture worker of its own, stopped and started again on the same port and
 * persist dir, so the conversation is still stored when it returns.
 */
import type { BrowserCommand } from "vitest/node";
import { startWorkerTwice, type WorkerServer } from "./wrangler.ts";

declare module "vitest/browser" {
  interface BrowserCommands {
    /** Starts the outage server (once per run); its `host:port`. */
    outageServerStart: () => Promise<{ host: string; origin: string }>;
    /** Stops it: the agent is unreachable until `outageServerResume`. */
    outageServerDown: () => Promise<void>;
    /** Starts it again on the same port and persist dir. */
    outageServerResume: () => Promise<{ host: string; origin: string }>;
    /** Stops it for good (the end of the file). */
    outageServerStop: () => Promise<void>;
  }
}

let server: WorkerServer | undefined;
/** A start waits this long for one `wrangler dev` (a healthy one answers in seconds), so a second start fits a test's time. */
const READY_MS = 45_000;
let last: { port: number; persistTo: string } | undefined;

const address = (s: WorkerServer) => ({ host: s.host, origin: s.origin });

const outageServerStart: BrowserCommand<[]> = async () => {
  server ??= await startWorkerTwice({ logFile: process.env.WRANGLER_LOG, readyTimeoutMs: READY_MS }, "outage-commands");
  last = { port: server.port, persistTo: server.persistTo };
  return address(server);
};

const outageServerDown: BrowserCommand<[]> = async () => {
  if (!server) throw new Error("outageServerDown: no outage server is running");
  await server.stop();
  server = undefined;
};

const outageServerResume: BrowserCommand<[]> = async () => {
  if (!last) throw new Error("outageServerResume: the outage server was never started");
  server ??= await startWorkerTwice({ ...last, logFile: process.env.WRANGLER_LOG, readyTimeoutMs: READY_MS }, "outage-commands");
  return address(server);
};

const outageServerStop: BrowserCommand<[]> = async () => {
  await server?.stop();
  server = undefined;
  last = undefined;
};

export const outageCommands = { outageServerStart, outageServerDown, outageServerResume, outageServerStop };
