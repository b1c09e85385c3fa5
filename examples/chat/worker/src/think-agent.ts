/**
 * The demo's agent on Think (`DEMO_AGENT=think npm run demo`): the same
 * model and `deleteItem` approval as `ChatAgent`, on a `Think`
 * agent from `@cloudflare/think`, which keeps the conversation as a session
 * tree and merges the tools the page announces by itself. The page needs no
 * change: `wrangler.think.jsonc` binds it under the same name, `ChatAgent`.
 */
import { Think } from "@cloudflare/think";
import { jsonSchema, tool, type ToolSet } from "ai";
import { chooseModel } from "./model.ts";

const SYSTEM = `You are the assistant in the agents-vue demo, a Vue chat app talking to a Cloudflare Think agent.
Be friendly and brief. When the user asks for the time, call getLocalTime (it runs in their browser).
When they ask you to delete something, call deleteItem; the user approves or denies it first.`;

export class ThinkChatAgent extends Think<Cloudflare.Env> {
  override getModel() {
    return chooseModel(this.env).model;
  }

  override getSystemPrompt(): string {
    return SYSTEM;
  }

  override getTools(): ToolSet {
    return {
      deleteItem: tool({
        description: "Delete an item. Permanent, so the user approves it first.",
        inputSchema: jsonSchema<{ item: string }>({
          type: "object",
          properties: { item: { type: "string", description: "What to delete" } },
          required: ["item"]
        }),
        needsApproval: true,
        execute: async ({ item }) => {
          await new Promise((resolve) => setTimeout(resolve, 600)); // pretend to work
          return { deleted: true, item, at: new Date().toISOString() };
        }
      })
    };
  }
}
