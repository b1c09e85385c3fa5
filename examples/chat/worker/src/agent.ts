/**
 * The demo's agent: an `AIChatAgent` with an ordered transcript
 * (`orderTranscript` from `agents-vue/server`: exact sync). It streams a
 * reply with `streamText`, offers the tools the page announced (they run in
 * the browser) plus one server tool that waits for the user's approval.
 */
import { AIChatAgent, createToolsFromClientSchemas, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import {
  convertToModelMessages,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  type GenerateTextOnFinishCallback,
  type ToolSet
} from "ai";
import { orderTranscript } from "agents-vue/server";
import { chooseModel } from "./model.ts";

const SYSTEM = `You are the assistant in the agents-vue demo, a Vue chat app talking to a Cloudflare AIChatAgent.
Be friendly and brief. When the user asks for the time, call getLocalTime (it runs in their browser).
When they ask you to delete something, call deleteItem; the user approves or denies it first.`;

export class ChatAgent extends AIChatAgent<Cloudflare.Env> {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    orderTranscript(this); // numbers the transcript and sends it over the socket: tabs never guess which copy is newer
  }

  async onChatMessage(
    onFinish: GenerateTextOnFinishCallback<ToolSet>,
    options?: OnChatMessageOptions
  ): Promise<Response> {
    const tools: ToolSet = {
      // Tools the page announced (`tools` with `execute` in useAgentChat): the model
      // calls them, the browser runs them and sends the output back.
      ...createToolsFromClientSchemas(options?.clientTools),
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

    const { model } = chooseModel(this.env);
    const result = streamText({
      model,
      system: SYSTEM,
      messages: await convertToModelMessages(this.messages, { tools, ignoreIncompleteToolCalls: true }),
      tools,
      stopWhen: stepCountIs(5),
      abortSignal: options?.abortSignal,
      onFinish
    });
    return result.toUIMessageStreamResponse();
  }
}
