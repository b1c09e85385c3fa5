import type { TestProject } from "vitest/node";
import { STARTUP_TIMEOUTS, withStartupTimeout } from "./startup.ts";
import { startWorker } from "./wrangler.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** `host:port` of the shared `wrangler dev` serving the test agents. */
    agentHost: string;
    /** `http://host:port` of the same server. */
    agentOrigin: string;
    /** The chat agent class the e2e tier talks to (`E2E_CHAT_AGENT`, default `ScriptedChatAgent`). */
    chatAgent: string;
  }
}

/** One `wrangler dev` for the whole e2e run, stopped by pid when the run ends. */
export default async function setup(project: TestProject) {
  // Bounded: a start that hangs fails the run in minutes, naming the step (wrangler's own ready wait is bounded too).
  const server = await withStartupTimeout(
    "e2e global setup: start wrangler dev",
    STARTUP_TIMEOUTS.globalSetupMs,
    startWorker({ logFile: process.env.WRANGLER_LOG }),
    (late) => late.stop()
  );
  project.provide("agentHost", server.host);
  project.provide("agentOrigin", server.origin);
  // The same scripted agent, stock (`ScriptedChatAgent`) or with exact
  // sync's server half (`OrderedChatAgent`): `E2E_CHAT_AGENT=OrderedChatAgent`.
  project.provide("chatAgent", process.env.E2E_CHAT_AGENT || "ScriptedChatAgent");
  return async () => {
    await server.stop();
  };
}
