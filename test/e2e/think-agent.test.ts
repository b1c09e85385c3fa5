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
}, 260_000); // two starts of up to 100 s each (think-commands.ts), and the stops between
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
/** The turns the model ran (logged by the fixture's `beforeTurn`). */
const turns = async (name: string) => (await readLog(name)).filter((entry) => entry.kind === "chat-message");

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

  it("a turn sent in one tab streams into a second tab", async () => {
    const name = uniqueName("think-tabs");
    const a = open(name, chatScript({ chunks: 20, chunkDelayMs: 50 })).chat;
    const b = open(name).chat;
    await Promise.all([a.ready, b.ready, whenOpen(a), whenOpen(b)]);
    const seenB = trackTexts(b);
    await a.sendMessage({ text: "to both" });
    await whenSettled(a);
    await expectScreenIsStored(b, name);
    expect(textOf(b.messages.value[1])).toBe(expectedText(20));
    expect(seenB.some((row) => row[1] !== undefined && row[1].length > 0 && row[1] !== expectedText(20))).toBe(true);
    expect(b.status.value).toBe("ready");
  });
});

describe("Think: client tools and approvals in two tabs", () => {
  it("a client tool's continuation shows once in both tabs, as Think stores it", async () => {
    const name = uniqueName("think-tool");
    const tools: Record<string, AITool> = {
      getLocation: {
        description: "Where the user is.",
        parameters: { type: "object", properties: {} },
        execute: async () => ({ city: "Lisbon" })
      }
    };
    const script = chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }], firstChunkDelayMs: 150 });
    const a = open(name, { tools, ...script }).chat;
    const b = open(name, { tools, ...script }).chat;
    await Promise.all([a.ready, b.ready, whenOpen(a), whenOpen(b)]);
    const seenB = trackTexts(b);
    await a.sendMessage({ text: "where am I?" });
    const reply = afterToolsText([json({ city: "Lisbon" })]);
    await vi.waitFor(() => expect(texts(a.messages.value)).toContain(reply), { timeout: 15_000 });
    await whenSettled(a);
    await expectScreenIsStored(a, name);
    await expectScreenIsStored(b, name);
    // Think stores the continuation as a message of its own, after the tool call's.
    const transcript = await stored(name);
    expect(transcript.map((message) => message.role)).toEqual(["user", "assistant", "assistant"]);
    expect(allToolParts(b.messages.value)).toHaveLength(1);
    // The watching tab never showed the reply twice.
    for (const row of seenB) expect(row.filter((text) => text.includes(reply)).length).toBeLessThanOrEqual(1);
    // One continuation ran on the server: the tool result went once.
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false, true]);
  });
});

describe("Think: approvals", () => {
  it("a needsApproval tool is approved through the protocol; both tabs end on Think's transcript", async () => {
    const name = uniqueName("think-approve");
    const script = chatScript({ toolCalls: [{ toolName: "dangerousAction", input: { target: "prod" } }] });
    const a = open(name, script).chat;
    const b = open(name, script).chat;
    await Promise.all([a.ready, b.ready, whenOpen(a), whenOpen(b)]);
    const seenB = trackTexts(b);
    await a.sendMessage({ text: "do it" });
    const asked = await vi.waitFor(
      () => {
        const part = allToolParts(a.messages.value).find((candidate) => candidate.state === "approval-requested");
        expect(part?.approval?.id).toBeTypeOf("string");
        return part!;
      },
      { timeout: 15_000 }
    );
    // Think keeps this approval in the tool part: its approval callables list none.
    await a.addToolApprovalResponse({ id: asked.approval!.id, approved: true });
    const reply = afterToolsText([json({ done: true, target: "prod" })]);
    await vi.waitFor(() => expect(texts(a.messages.value)).toContain(reply), { timeout: 15_000 });
    await whenSettled(a);
    await expectScreenIsStored(a, name);
    await expectScreenIsStored(b, name);
    expect((await readLog(name)).filter((entry) => entry.kind === "tool-executed")).toHaveLength(1);
    for (const row of seenB) expect(row.filter((text) => text.includes(reply)).length).toBeLessThanOrEqual(1);
  });

  it("a durable-pause action is listed by pendingApprovals and run by approveExecution (useAgent call); the chat shows the outcome", async () => {
    const name = uniqueName("think-pause");
    const chat = open(name, chatScript({ toolCalls: [{ toolName: "deploy", input: { ref: "v1" } }] })).chat;
    await Promise.all([chat.ready, whenOpen(chat)]);
    const agent = mountComposable(() => useAgent({ agent: THINK, host: think.host, name }));
    cleanup.push(agent.unmount);
    await agent.result.ready;
    await chat.sendMessage({ text: "deploy v1" });
    await whenSettled(chat);
    const pending = await vi.waitFor(async () => {
      const listed = (await agent.result.call("pendingApprovals", [])) as Array<{ executionId: string; descriptor: { action: string; input: unknown } }>;
      expect(listed).toHaveLength(1);
      return listed;
    });
    expect(pending[0]!.descriptor).toMatchObject({ action: "deploy", input: { ref: "v1" } });
    await agent.result.call("approveExecution", [pending[0]!.executionId]);
    // The outcome replaces the paused output and the chat continues with it.
    await vi.waitFor(async () => expect(JSON.stringify(await stored(name))).toContain('"deployed":"v1"'), { timeout: 15_000 });
    await vi.waitFor(() => expect(JSON.stringify(chat.messages.value)).toContain('"deployed":"v1"'), { timeout: 15_000 });
    await whenSettled(chat);
    await expectScreenIsStored(chat, name);
    expect(await agent.result.call("pendingApprovals", [])).toEqual([]);
    expect((await readLog(name)).filter((entry) => entry.kind === "tool-executed")).toHaveLength(1);
  });
});

describe("Think: reload, socket drop, regenerate, clear", () => {
  it("a reload mid-reply shows the reply once, equal to what Think stores", async () => {
    const name = uniqueName("think-reload");
    const script = chatScript({ chunks: 40, chunkDelayMs: 60 });
    const first = open(name, script);
    await Promise.all([first.chat.ready, whenOpen(first.chat)]);
    void first.chat.sendMessage({ text: "long one" });
    await vi.waitFor(() => expect(textOf(first.chat.messages.value[1]).length).toBeGreaterThan(6), { timeout: 15_000 });
    expect(textOf(first.chat.messages.value[1]).length).toBeLessThan(expectedText(40).length / 2);
    first.unmount();
    // The reply still runs: Think answers the new socket with only `cf_agent_stream_resuming`.
    const again = open(name, script).chat;
    const seen = trackTexts(again);
    await again.ready;
    await vi.waitFor(() => expect(textOf(again.messages.value[1])).toBe(expectedText(40)), { timeout: 20_000 });
    await whenSettled(again);
    await expectScreenIsStored(again, name);
    expect(again.messages.value.map((message) => message.role)).toEqual(["user", "assistant"]);
    for (const row of seen) for (const text of row) expect(expectedText(40).startsWith(text) || text === "long one").toBe(true);
    expect(again.error.value).toBeUndefined();
  });

  // Cut after 4 of 60 deltas: the reply still runs when the client is back (resumed from the stream).
  // Cut after 12 of 14: it ends while the client waits to reconnect (Think answers the resume with
  // `cf_agent_stream_resume_none` and its transcript); it ends ready, not in error (issue 28's fix).
  for (const [label, chunks, cutAt] of [
    ["resumes the stream", 60, 4],
    ["that ends during the reconnect ends ready, not in error", 14, 12]
  ] as const) {
    it(`a socket drop mid-reply: a reply ${label}`, async () => {
      const name = uniqueName("think-drop");
      const chat = open(name, chatScript({ chunks, chunkDelayMs: 60 })).chat;
      await Promise.all([chat.ready, whenOpen(chat)]);
      const statuses: string[] = [];
      cleanup.push(watch(chat.status, (status) => statuses.push(status), { flush: "sync" }));
      void chat.sendMessage({ text: `drop ${label}` });
      await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThanOrEqual(expectedText(cutAt).length), {
        timeout: 15_000
      });
      const closed = await fetch(`${agentUrl(name)}/close-connections`, {
        method: "POST",
        body: JSON.stringify({ code: 1011, reason: "cut by test" })
      });
      expect(((await closed.json()) as { closed: number }).closed).toBe(1);
      expect(textOf(chat.messages.value[1]).length).toBeLessThan(expectedText(chunks).length);
      await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(expectedText(chunks)), { timeout: 30_000 });
      await whenSettled(chat, 15_000);
      expect(chat.error.value).toBeUndefined();
      expect(statuses.at(-1)).toBe("ready");
      expect(chat.messages.value.map((message) => message.role)).toEqual(["user", "assistant"]);
      await expectScreenIsStored(chat, name);
    });
  }

  it("regenerate keeps the old reply as a branch on the server; the screen shows Think's current branch; a recipe switches the shown branch", async () => {
    const name = uniqueName("think-regen");
    const chat = open(name, chatScript({ chunks: 4 })).chat;
    await Promise.all([chat.ready, whenOpen(chat)]);
    await chat.sendMessage({ text: "first" });
    await whenSettled(chat);
    const [question, oldReply] = chat.messages.value as [UIMessage, UIMessage];
    await chat.regenerate();
    await whenSettled(chat);
    await expectScreenIsStored(chat, name);
    const current = chat.messages.value[1]!;
    expect(chat.messages.value).toHaveLength(2);
    expect(current.id).not.toBe(oldReply.id);
    // No lost branch: both replies stay stored under the question.
    const agent = mountComposable(() => useAgent({ agent: THINK, host: think.host, name }));
    cleanup.push(agent.unmount);
    await agent.result.ready;
    const found: unknown = await agent.result.call("getResponseVersions", [question.id]);
    const versions = found as UIMessage[];
    expect(versions.map((version) => version.id).toSorted()).toEqual([oldReply.id, current.id].toSorted());
    // The Think guide's recipe (docs/guide/think.md): show another branch with setMessages; on Think it changes this screen only.
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    chat.setMessages([question, versions.find((version) => version.id === oldReply.id)!]);
    expect(chat.messages.value.map((message) => message.id)).toEqual([question.id, oldReply.id]);
    expect(warn.mock.calls.some(([text]) => String(text).includes("Think"))).toBe(true);
    expect((await stored(name)).map((message) => message.id)).toEqual([question.id, current.id]);
  });

  it("a clear from another tab empties both screens and Think's history", async () => {
    const name = uniqueName("think-clear");
    const a = open(name, chatScript({ chunks: 3 })).chat;
    const b = open(name).chat;
    await Promise.all([a.ready, b.ready, whenOpen(a), whenOpen(b)]);
    await a.sendMessage({ text: "to be cleared" });
    await whenSettled(a);
    await expectScreenIsStored(b, name);
    b.clearHistory();
    await vi.waitFor(() => expect(a.messages.value).toEqual([]), { timeout: 10_000 });
    expect(b.messages.value).toEqual([]);
    await vi.waitFor(async () => expect(await stored(name)).toEqual([]));
    // The conversation goes on after it.
    await a.sendMessage({ text: "again" });
    await whenSettled(a);
    await expectScreenIsStored(a, name);
    await expectScreenIsStored(b, name);
  });
});
