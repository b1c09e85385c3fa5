/**
 * A small streaming model over any OpenAI-compatible `/chat/completions` API
 * (OpenAI, Workers AI's OpenAI endpoint, Groq, OpenRouter, Ollama, ...), so
 * the demo can use a real model without adding a provider package. It covers
 * what the demo needs: text, tool calls and tool results, streamed.
 *
 * In your own app, prefer an AI SDK provider (`workers-ai-provider`,
 * `@ai-sdk/openai`, ...): they handle far more than this.
 */
import type { LanguageModel } from "ai";

type Model = Extract<LanguageModel, { specificationVersion: "v4" }>;
type CallOptions = Parameters<Model["doStream"]>[0];
type StreamPart = Awaited<ReturnType<Model["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;
type ToolPart = Extract<CallOptions["prompt"][number], { role: "tool" }>["content"][number];
type ToolOutput = Extract<ToolPart, { type: "tool-result" }>["output"];
type FinishReason = Extract<StreamPart, { type: "finish" }>["finishReason"];

export interface OpenAICompatibleSettings {
  /** e.g. `https://api.openai.com/v1` (no trailing `/chat/completions`). */
  baseURL: string;
  apiKey: string;
  model: string;
  /** A name for logs and errors. */
  provider?: string;
}

interface ChatCompletionChunk {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export function createOpenAICompatibleModel(settings: OpenAICompatibleSettings): Model {
  const provider = settings.provider ?? "openai-compatible";
  return {
    specificationVersion: "v4",
    provider,
    modelId: settings.model,
    supportedUrls: {},
    doGenerate() {
      throw new Error(`${provider}: this demo model only streams (use streamText).`);
    },
    async doStream(options) {
      const response = await fetch(`${settings.baseURL.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${settings.apiKey}` },
        body: JSON.stringify({
          model: settings.model,
          stream: true,
          stream_options: { include_usage: true },
          messages: toOpenAIMessages(options.prompt),
          tools: toOpenAITools(options.tools),
          max_tokens: options.maxOutputTokens,
          temperature: options.temperature
        }),
        signal: options.abortSignal
      });
      if (!response.ok || !response.body) {
        const detail = await response.text().catch(() => "");
        throw new Error(`${provider}: ${response.status} ${response.statusText} ${detail.slice(0, 300)}`);
      }
      return { stream: response.body.pipeThrough(new TextDecoderStream()).pipeThrough(toStreamParts()) };
    }
  };
}

function toOpenAITools(tools: CallOptions["tools"]) {
  const functions = (tools ?? []).filter((tool) => tool.type === "function");
  if (functions.length === 0) return undefined;
  return functions.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema }
  }));
}

function toOpenAIMessages(prompt: CallOptions["prompt"]) {
  const messages: Array<Record<string, unknown>> = [];
  for (const message of prompt) {
    switch (message.role) {
      case "system":
        messages.push({ role: "system", content: message.content });
        break;
      case "user":
        messages.push({
          role: "user",
          content: message.content.map((part) => (part.type === "text" ? part.text : `[${part.mediaType} attachment]`)).join("\n")
        });
        break;
      case "assistant": {
        const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
        const calls = message.content.filter((part) => part.type === "tool-call");
        messages.push({
          role: "assistant",
          content: text || null,
          tool_calls: calls.length
            ? calls.map((call) => ({
                id: call.toolCallId,
                type: "function",
                function: { name: call.toolName, arguments: JSON.stringify(call.input ?? {}) }
              }))
            : undefined
        });
        break;
      }
      case "tool":
        for (const part of message.content) {
          if (part.type !== "tool-result") continue;
          messages.push({ role: "tool", tool_call_id: part.toolCallId, content: toolOutputText(part.output) });
        }
        break;
    }
  }
  return messages;
}

function toolOutputText(output: ToolOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return `The user denied this tool call${output.reason ? `: ${output.reason}` : "."}`;
    default:
      return JSON.stringify(output);
  }
}

const FINISH_REASONS: Record<string, FinishReason["unified"]> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
  content_filter: "content-filter"
};

/** Server-sent events of chat completion chunks → AI SDK stream parts. */
function toStreamParts(): TransformStream<string, StreamPart> {
  let buffer = "";
  let textOpen = false;
  let finishReason: FinishReason = { unified: "other", raw: undefined };
  let usage: { prompt_tokens?: number; completion_tokens?: number } = {};
  const calls = new Map<number, { id: string; name: string; args: string }>();

  const handle = (chunk: ChatCompletionChunk, controller: TransformStreamDefaultController<StreamPart>) => {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      const content = choice.delta?.content;
      if (content) {
        if (!textOpen) controller.enqueue({ type: "text-start", id: "text" });
        textOpen = true;
        controller.enqueue({ type: "text-delta", id: "text", delta: content });
      }
      for (const call of choice.delta?.tool_calls ?? []) {
        const current = calls.get(call.index) ?? { id: call.id ?? `call-${call.index}`, name: "", args: "" };
        if (call.id) current.id = call.id;
        current.name += call.function?.name ?? "";
        current.args += call.function?.arguments ?? "";
        calls.set(call.index, current);
      }
      if (choice.finish_reason) {
        finishReason = { unified: FINISH_REASONS[choice.finish_reason] ?? "other", raw: choice.finish_reason };
      }
    }
  };

  return new TransformStream<string, StreamPart>({
    start(controller) {
      controller.enqueue({ type: "stream-start", warnings: [] });
    },
    transform(text, controller) {
      buffer += text;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        const data = line.startsWith("data:") ? line.slice(5).trim() : "";
        if (!data || data === "[DONE]") continue;
        try {
          handle(JSON.parse(data) as ChatCompletionChunk, controller);
        } catch (error) {
          controller.enqueue({ type: "error", error });
        }
      }
    },
    flush(controller) {
      if (textOpen) controller.enqueue({ type: "text-end", id: "text" });
      for (const call of calls.values()) {
        controller.enqueue({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args || "{}" });
      }
      if (calls.size > 0 && finishReason.unified === "other") finishReason = { unified: "tool-calls", raw: undefined };
      controller.enqueue({
        type: "finish",
        finishReason,
        usage: {
          inputTokens: { total: usage.prompt_tokens, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: usage.completion_tokens, text: undefined, reasoning: undefined }
        }
      });
    }
  });
}
