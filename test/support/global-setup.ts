import type { TestProject } from "vitest/node";
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
  const server = await startWorker({ logFile: process.env.WRANGLER_LOG });
  project.provide("agentHost", server.host);
  project.provide("agentOrigin", server.origin);
  // The same scripted agent, stock (`ScriptedChatAgent`) or with exact
  // sync's server half (`OrderedChatAgent`): `E2E_CHAT_AGENT=OrderedChatAgent`.
  project.provide("chatAgent", process.env.E2E_CHAT_AGENT || "ScriptedChatAgent");
  return async () => {
    await server.stop();
  };
}
