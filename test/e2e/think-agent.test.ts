/**
 * `useAgentChat` against a real `Think` agent from `@cloudflare/think` (the
 * fixture's `ThinkAgent`, scripted model) in `wrangler dev`: what a Think user
 * does, end to end. Think keeps history as a session tree, regenerates
 * without deleting the old reply, ignores transcripts a client pushes, and
 * answers a reconnect during a running reply with only `cf_agent_stream_resuming`.
 */
import type { UIMessage } from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { commands } from "vitest/browser";
import { watch } from "vue";
import { useAgent, useAgentChat, type AITool, type UseAgentChatOptions } from "../../src";
import { afterToolsText, expectedText, type Script } from "../fixtures/worker/src/script";
import { type Chat, whenOpen, whenSettled } from "../support/chat";
import { type LogEntry, shape, textOf, uniqueName } from "../support/e2e";
import { mountComposable } from "../support/mount";

const THINK = "ThinkAgent";

type Part = UIMessage["parts"][number];
type ToolPart = Part & { toolCallId: string; state: string; input?: unknown; output?: unknown; approval?: { id: string } };
const toolParts = (message: UIMessage | undefined): ToolPart[] =>
  (message?.parts ?? []).filter((part): part is ToolPart => "toolCallId" in part);
const allToolParts = (messages: readonly UIMessage[]) => messages.flatMap(toolParts);
const texts = (messages: readonly UIMessage[]) => messages.map(textOf);
const json = (value: unknown) => ({ type: "json", value });
const chatScript = (script: Script) => ({ body: { script } });

/** The Think fixture worker (its own `wrangler dev`, see think-commands.ts). */
let think: { host: string; origin: string };
beforeAll(async () => {
  think = await commands.thinkServerStart();
}, 200_000);
afterAll(async () => {
  await commands.thinkServerStop();
});

const agentUrl = (name: string) => `${think.origin}/agents/think-agent/${encodeURIComponent(name)}`;
/** Think's current branch, as its session stores it. */
async function stored(name: string): Promise<UIMessage[]> {
  const response = await fetch(`${agentUrl(name)}/stored`);
  expect(response.ok).toBe(true);
  return (await response.json()) as UIMessage[];
}
async function readLog(name: string): Promise<LogEntry[]> {
  const response = await fetch(`${agentUrl(name)}/log`);
  expect(response.ok).toBe(true);
  return ((await response.json()) as { entries: LogEntry[] }).entries;
}
const framesOf = async (name: string, type: string) =>
  (await readLog(name)).filter((entry) => entry.kind === "frame" && entry.type === type);

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.restoreAllMocks();
});

/** Mounts `useAgentChat` on the Think agent's conversation `name`. */
function open(name: string, options: Partial<UseAgentChatOptions> = {}) {
  const mounted = mountComposable(() => useAgentChat({ client: { agent: THINK, host: think.host, name }, ...options }));
  let live = true;
  const unmount = () => {
    if (live) mounted.unmount();
    live = false;
  };
  cleanup.push(unmount);
  return { chat: mounted.result as Chat, unmount };
}

/** Waits until the screen shows exactly Think's current branch (ids, roles, text per part). */
async function expectScreenIsStored(chat: Chat, name: string, timeout = 10_000) {
  await vi.waitFor(async () => expect(shape(chat.messages.value)).toEqual(shape(await stored(name))), {
    timeout,
    interval: 50
  });
}

/** Every transcript a chat ever showed: the longest text, so a doubled reply is caught even if later corrected. */
function trackTexts(chat: Chat) {
  const seen: string[][] = [];
  cleanup.push(watch(chat.messages, (messages) => seen.push(texts(messages)), { flush: "sync", immediate: true }));
  return seen;
}

describe("Think: send and stream", () => {
  it("streams a reply into the screen, and the screen equals what Think stores", async () => {
    const name = uniqueName("think-send");
    const { chat } = open(name, chatScript({ chunks: 8, chunkDelayMs: 30 }));
    await chat.ready;
    const seen = trackTexts(chat);
    await chat.sendMessage({ text: "hello think" });
    await whenSettled(chat);
    expect(chat.messages.value.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(textOf(chat.messages.value[1])).toBe(expectedText(8));
    // It streamed: the screen showed a partial reply before the whole one.
    expect(seen.some((row) => row[1] !== undefined && row[1].length > 0 && row[1] !== expectedText(8))).toBe(true);
    expect(chat.error.value).toBeUndefined();
    await expectScreenIsStored(chat, name);
  });
});
