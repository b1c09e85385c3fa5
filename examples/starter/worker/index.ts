/**
 * The Worker: `/agents/chat-agent/<name>` reaches the `ChatAgent` Durable
 * Object of that conversation (HTTP and WebSocket); everything else is the
 * Vue app, served from static assets (see `assets` in wrangler.jsonc).
 */
import { routeAgentRequest } from "agents";

export { ChatAgent } from "./agent";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("Not found", { status: 404 });
  }
} satisfies ExportedHandler<Env>;
