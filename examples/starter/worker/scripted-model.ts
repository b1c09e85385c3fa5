/**
 * The offline model of `npm run dev`: a real AI SDK model (`MockLanguageModelV4`
 * from `ai/test`) that streams a scripted Markdown reply word by word, so the
 * agent, the stream, Stop and reloads behave as they do with a real model.
 */
import { MockLanguageModelV4 } from "ai/test";

type DoStream = MockLanguageModelV4["doStream"];
type Prompt = Parameters<DoStream>[0]["prompt"];
type StreamPart = Awaited<ReturnType<DoStream>>["stream"] extends ReadableStream<infer P> ? P : never;

const WORD_DELAY_MS = 40;
const USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined }
};

export function createScriptedModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "starter",
    modelId: "scripted",
    doStream: async ({ prompt, abortSignal }) => ({ stream: streamWords(replyTo(prompt), abortSignal) })
  });
}

function replyTo(prompt: Prompt): string {
  const question = lastUserText(prompt) || "(nothing)";
  if (/^\/long\b/i.test(question)) {
    return Array.from({ length: 60 }, (_, i) => `Sentence ${i + 1} of a long reply: press **Stop** to end it here.`).join(" ");
  }
  return [
    `You said: ${question}`,
    "",
    "I'm the **offline scripted model** of `npm run dev`: every word streams from a real `AIChatAgent` over a WebSocket.",
    "",
    "- `npm run deploy` puts this app on Cloudflare, where Workers AI answers instead;",
    "- send `/long` for a reply long enough to stop."
  ].join("\n");
}

function lastUserText(prompt: Prompt): string {
  const message = prompt.findLast((entry) => entry.role === "user");
  if (message?.role !== "user") return "";
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join(" ").trim();
}

function streamWords(text: string, signal: AbortSignal | undefined): ReadableStream<StreamPart> {
  const words = text.match(/\S+\s*/g) ?? [];
  let index = -1;
  return new ReadableStream<StreamPart>({
    async pull(controller) {
      if (signal?.aborted) return controller.error(signal.reason);
      if (index === -1) {
        controller.enqueue({ type: "stream-start", warnings: [] });
        controller.enqueue({ type: "text-start", id: "text" });
      } else if (index < words.length) {
        await new Promise((resolve) => setTimeout(resolve, WORD_DELAY_MS));
        controller.enqueue({ type: "text-delta", id: "text", delta: words[index]! });
      } else {
        controller.enqueue({ type: "text-end", id: "text" });
        controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE });
        controller.close();
      }
      index++;
    }
  });
}
