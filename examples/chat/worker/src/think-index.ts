/**
 * The demo worker on Think (`wrangler.think.jsonc`, `DEMO_AGENT=think npm run demo`):
 * `/agents/chat-agent/<name>` reaches the Think agent for that conversation.
 */
import { routeAgentRequest } from "agents";

export { ThinkChatAgent } from "./think-agent.ts";

export default {
  async fetch(request: Request, env: Cloudflare.Env): Promise<Response> {
    if (new URL(request.url).pathname === "/health") return new Response("ok");
    return (await routeAgentRequest(request, env, { cors: true })) ?? new Response("Not found", { status: 404 });
  }
} satisfies ExportedHandler<Cloudflare.Env>;
