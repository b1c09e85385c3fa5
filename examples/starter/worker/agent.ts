/**
 * The agent: a plain `AIChatAgent`. Each conversation is one Durable Object
 * that stores its messages and streams replies over the WebSocket; a reply
 * survives reloads and reaches every open tab.
 */
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { convertToModelMessages, streamText, type GenerateTextOnFinishCallback, type ToolSet } from "ai";
import { chooseModel } from "./model";

export class ChatAgent extends AIChatAgent<Env> {
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
