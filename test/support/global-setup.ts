import type { TestProject } from "vitest/node";
import { startWorker } from "./wrangler.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** `host:port` of the shared `wrangler dev` serving the test agents. */
    agentHost: string;
    /** `http://host:port` of the same server. */
    agentOrigin: string;
  }
}

/** One `wrangler dev` for the whole e2e run, stopped by pid when the run ends. */
export default async function setup(project: TestProject) {
  const server = await startWorker({ logFile: process.env.WRANGLER_LOG });
  project.provide("agentHost", server.host);
  project.provide("agentOrigin", server.origin);
  return async () => {
    await server.stop();
  };
}
