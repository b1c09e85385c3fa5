/**
 * The demo worker: `/agents/chat-agent/<name>` reaches the `ChatAgent`
 * Durable Object for that conversation; `/health` tells `npm run demo`
 * that wrangler is up.
 */
import { routeAgentRequest } from "agents";

export { ChatAgent } from "./agent.ts";

export default {
  async fetch(request: Request, env: Cloudflare.Env): Promise<Response> {
    if (new URL(request.url).pathname === "/health") return new Response("ok");
    // `cors`: pages on other origins (the Nuxt example, VITE_AGENT_HOST) can read transcripts too.
    return (await routeAgentRequest(request, env, { cors: true })) ?? new Response("Not found", { status: 404 });
  }
} satisfies ExportedHandler<Cloudflare.Env>;
