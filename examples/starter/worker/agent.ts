/**
 * The agent: an `AIChatAgent` with an ordered transcript. Each conversation
 * is one Durable Object that stores its messages and streams replies over the
 * WebSocket; a reply survives reloads and reaches every open tab, and every
 * tab ends on the transcript the agent stores (`orderTranscript`: exact sync).
 */
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { convertToModelMessages, streamText, type GenerateTextOnFinishCallback, type ToolSet } from "ai";
import { orderTranscript } from "agents-vue/server";
import { chooseModel } from "./model";

export class ChatAgent extends AIChatAgent<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    orderTranscript(this); // numbers the transcript and sends it over the socket: tabs never guess which copy is newer
  }

  async onChatMessage(onFinish: GenerateTextOnFinishCallback<ToolSet>, options?: OnChatMessageOptions): Promise<Response> {
    const result = streamText({
      model: await chooseModel(this.env),
      system: "You are a helpful assistant in a Vue chat app. Answer in Markdown, briefly.",
      messages: await convertToModelMessages(this.messages),
      abortSignal: options?.abortSignal,
      onFinish
    });
    return result.toUIMessageStreamResponse();
  }
}
