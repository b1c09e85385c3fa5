/**
 * The offline assistant: a scripted language model (no API key, no network).
 *
 * It is a real AI SDK model (`MockLanguageModelV4` from `ai/test`) driven by
 * `streamText`, so everything downstream — the AIChatAgent, tool calls,
 * approvals, resumable streams — runs exactly as it would with a real model.
 * Each step is planned from the prompt:
 *
 * - a tool result just came back     → say what it means;
 * - a reply was cut short (recovery) → say the rest of it;
 * - "/time", or asks for the time    → call the browser's `getLocalTime` tool;
 * - "/approve", or asks to delete    → call `deleteItem` (needs approval);
 * - "/story"                         → a long reply (try Stop, or reload mid-way);
 * - "/help", "hi"                    → what the demo can do;
 * - anything else                    → a friendly echo of the question.
 */
import { MockLanguageModelV4 } from "ai/test";

type DoStream = MockLanguageModelV4["doStream"];
type CallOptions = Parameters<DoStream>[0];
type Prompt = CallOptions["prompt"];
type StreamPart = Awaited<ReturnType<DoStream>>["stream"] extends ReadableStream<infer P> ? P : never;

/** Milliseconds between words: a human reading pace, not a benchmark. */
const WORD_DELAY_MS = 55;
const WORD_JITTER_MS = 45;

const USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined }
};

type Plan =
  | { kind: "text"; text: string }
  | { kind: "tool"; text: string; toolName: string; input: Record<string, unknown> };

export function createScriptedModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "agents-vue-demo",
    modelId: "scripted",
    doStream: async ({ prompt, tools, abortSignal }) => {
      const toolNames = new Set((tools ?? []).map((tool) => tool.name));
      const plan = planReply(prompt, toolNames);
      return { stream: toStream(speak(plan, abortSignal)) };
    }
  });
}

function planReply(prompt: Prompt, toolNames: Set<string>): Plan {
  const last = prompt.at(-1);
  if (last?.role === "tool") return { kind: "text", text: afterTool(prompt) };

  // A reply cut short (the agent restarted mid-stream) and now recovered:
  // say the rest of what was planned, not all of it again.
  if (last?.role === "assistant") {
    const said = last.content.map((part) => (part.type === "text" ? part.text : "")).join("");
    const plan = planReply(prompt.slice(0, -1), toolNames);
    if (plan.kind === "text" && said && plan.text.startsWith(said)) return { kind: "text", text: plan.text.slice(said.length) };
    return plan.kind === "text" ? { kind: "text", text: `…${plan.text}` } : plan;
  }

  const question = lastUserText(prompt);
  const lower = question.toLowerCase();

  if (/^\/time\b/.test(lower) || /\b(time|clock|o'clock)\b/.test(lower)) {
    if (!toolNames.has("getLocalTime")) {
      return { kind: "text", text: "I'd check your clock, but this page didn't offer me a getLocalTime tool." };
    }
    return {
      kind: "tool",
      text: "Let me look at the clock on your device.",
      toolName: "getLocalTime",
      input: {}
    };
  }

  if (/^\/approve\b/.test(lower) || /\b(delete|remove|erase|wipe)\b/.test(lower)) {
    const item = thingToDelete(question);
    return {
      kind: "tool",
      text: `Deleting is permanent, so I'll ask you first: shall I delete “${item}”?`,
      toolName: "deleteItem",
      input: { item }
    };
  }

  if (/^\/story\b/.test(lower) || /\bstory\b/.test(lower)) return { kind: "text", text: STORY };

  if (/^\/markdown\b/.test(lower)) return { kind: "text", text: MARKDOWN };

  if (/^\/help\b/.test(lower) || /^(hi|hello|hey)\b/.test(lower) || lower === "") {
    return { kind: "text", text: HELP };
  }

  return { kind: "text", text: echo(question, prompt) };
}

// --- what the assistant says ------------------------------------------------

const HELP = [
  "Hi! I'm the offline demo assistant: a scripted model inside a real AIChatAgent, streaming over a WebSocket.",
  "Try **/time** (I call a tool that runs in your browser), **/approve** (I ask before running a server tool),",
  "or **/story** for a long reply you can stop, regenerate, or interrupt with a reload.",
  "Open this page in a second tab to watch both stay in sync."
].join(" ");

const STORY = [
  "Once upon a time, a chat message set out from a browser tab.",
  "It travelled down a WebSocket, knocked on the door of a Durable Object, and asked for a story.",
  "The agent wrote the story one word at a time, saving every chunk as it went,",
  "because it knew that browser tabs are fickle: they get reloaded, put to sleep, closed by accident.",
  "And sure enough, halfway through, the tab vanished.",
  "But the agent kept writing. When the tab came back, it said hello again, and the agent replied:",
  "“Welcome back — here is everything you missed”, and replayed the story from the start,",
  "then carried on live from where it was.",
  "The reader never noticed a thing.",
  "Try it: reload this page before I finish, and watch the reply pick up where it left off.",
  "Or press Stop, and I will stop right here, mid-sentence, because the server hears you too.",
  "The end."
].join(" ");

/** A reply in Markdown, for pages that render it (e.g. examples/nuxt): emphasis, a list, code. */
const MARKDOWN = [
  "Here is **Markdown** from the agent, as a model would write it:",
  "",
  "- **bold** and *italic* text",
  "- a list with `inline code`",
  "- and a code block:",
  "",
  "```",
  'const chat = useAgentChat({ agent: "ChatAgent" });',
  "```",
  "",
  "That's all."
].join("\n");

const OPENERS = [
  (q: string) => `“${q}” — great question!`,
  (q: string) => `You asked “${q}” — I like where this is going.`,
  (q: string) => `Thanks for asking “${q}” — it's a good one.`,
  (q: string) => `Ooh, “${q}” — let me think out loud for a second.`
];

const BODIES = [
  "I'm a scripted model, so I can't really answer — but every word you see is streamed live from an AIChatAgent running in wrangler dev, with no API key.",
  "Honest answer: I only know a few tricks. Everything you're reading arrives word by word over a WebSocket, and it is saved on the server as it streams.",
  "I'm the offline stand-in for a real model. Plug one in (see examples/chat/README.md) and this same page will give you a real answer.",
  "I can't reason about it yet, but I can show you what the library does: streaming, tools, approvals, and sync across tabs."
];

const CLOSERS = [
  "Try /time to see a tool run in your browser.",
  "Try /approve to see an approval card.",
  "Try /story, then press Stop halfway.",
  "Open a second tab on this conversation and send me something from there."
];

function echo(question: string, prompt: Prompt): string {
  const q = question.length > 90 ? `${question.slice(0, 87).trimEnd()}…` : question;
  const seed = hash(q) + prompt.length;
  const turns = prompt.filter((message) => message.role === "user").length;
  const memory = turns > 1 ? ` (That's message number ${turns} in this conversation — I remember them all.)` : "";
  return `${pick(OPENERS, seed)(q)} ${pick(BODIES, seed >> 3)}${memory} ${pick(CLOSERS, seed >> 6)}`;
}

/** The reply once the tool result is in, from the result the model received. */
function afterTool(prompt: Prompt): string {
  const results = latestToolResults(prompt);
  if (results.length === 0) return "Done.";
  return results
    .map(({ toolName, input, output }) => {
      // A denial reaches the model as `execution-denied`, or (from a stored
      // `output-denied` part) as the error text "Tool call execution denied.".
      const denied =
        output.type === "execution-denied" || (output.type === "error-text" && /denied/i.test(output.value));
      if (denied) {
        const item = stringField(input, "item") ?? "it";
        return `No problem — I left “${item}” alone. Your “Deny” went to the server, and the model carried on from there.`;
      }
      if (output.type === "error-text" || output.type === "error-json") {
        return `The ${toolName} tool failed: ${typeof output.value === "string" ? output.value : JSON.stringify(output.value)}.`;
      }
      const value = output.type === "json" ? output.value : output.type === "text" ? output.value : undefined;
      if (toolName === "getLocalTime") {
        const time = stringField(value, "time") ?? "(unknown)";
        const zone = stringField(value, "timeZone") ?? "your time zone";
        return `It's **${time}** where you are (${zone}). I read that from your browser: getLocalTime ran on your device, and only its result came back to me.`;
      }
      if (toolName === "deleteItem") {
        const item = stringField(value, "item") ?? stringField(input, "item") ?? "it";
        return `Done — “${item}” is gone. (Not really: this is a demo, but the tool did run on the server after you approved it.)`;
      }
      return `The ${toolName} tool returned ${JSON.stringify(value)}.`;
    })
    .join(" ");
}

// --- reading the prompt -----------------------------------------------------

function lastUserText(prompt: Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message.role !== "user") continue;
    return message.content
      .map((part) => (part.type === "text" ? part.text : ""))
      .join(" ")
      .trim();
  }
  return "";
}

type ToolMessagePart = Extract<Prompt[number], { role: "tool" }>["content"][number];
type ToolOutput = Extract<ToolMessagePart, { type: "tool-result" }>["output"];

interface ToolOutcome {
  toolName: string;
  input: unknown;
  output: ToolOutput;
}

/** The tool results after the latest assistant message, with the inputs of their calls. */
function latestToolResults(prompt: Prompt): ToolOutcome[] {
  let start = prompt.length;
  while (start > 0 && prompt[start - 1].role === "tool") start--;
  const inputs = new Map<string, unknown>();
  const caller = prompt[start - 1];
  if (caller?.role === "assistant") {
    for (const part of caller.content) if (part.type === "tool-call") inputs.set(part.toolCallId, part.input);
  }
  const outcomes: ToolOutcome[] = [];
  for (const message of prompt.slice(start)) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type !== "tool-result") continue;
      outcomes.push({ toolName: part.toolName, input: inputs.get(part.toolCallId), output: part.output });
    }
  }
  return outcomes;
}

function thingToDelete(question: string): string {
  const match = /\b(?:delete|remove|erase|wipe)\s+(.+?)[.?!]*$/i.exec(question);
  const item = match?.[1]?.replace(/^(?:the|my|all)\s+/i, "").trim();
  return item && item.length <= 60 ? item : "the draft from yesterday";
}

function stringField(value: unknown, key: string): string | undefined {
  if (!value || typeof value !== "object") return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === "string" ? field : undefined;
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

function pick<T>(items: readonly T[], seed: number): T {
  return items[Math.abs(seed) % items.length];
}

// --- streaming --------------------------------------------------------------

async function* speak(plan: Plan, signal: AbortSignal | undefined): AsyncGenerator<StreamPart> {
  yield { type: "stream-start", warnings: [] };
  await sleep(350, signal); // "thinking"

  const words = plan.text.match(/\S+\s*/g) ?? [];
  const id = "text-0";
  yield { type: "text-start", id };
  for (const [index, word] of words.entries()) {
    throwIfAborted(signal);
    yield { type: "text-delta", id, delta: word };
    await sleep(WORD_DELAY_MS + (hash(word + index) % WORD_JITTER_MS), signal);
  }
  throwIfAborted(signal);
  yield { type: "text-end", id };

  if (plan.kind === "tool") {
    const toolCallId = `call-${crypto.randomUUID().slice(0, 8)}`;
    yield { type: "tool-call", toolCallId, toolName: plan.toolName, input: JSON.stringify(plan.input) };
    yield { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: USAGE };
    return;
  }
  yield { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE };
}

function toStream(parts: AsyncGenerator<StreamPart>): ReadableStream<StreamPart> {
  return new ReadableStream<StreamPart>(
    {
      async pull(controller) {
        try {
          const next = await parts.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (error) {
          controller.error(error);
        }
      },
      async cancel() {
        await parts.return(undefined);
      }
    },
    { highWaterMark: 0 }
  );
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException("The reply was stopped.", "AbortError");
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
