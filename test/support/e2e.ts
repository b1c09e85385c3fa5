import type { UIMessage } from "ai";
import { afterAll, beforeAll, expect, inject, vi } from "vitest";

/** `host:port` of the shared `wrangler dev`. */
export const agentHost = () => inject("agentHost");
export const agentOrigin = () => inject("agentOrigin");

let counter = 0;
/** A conversation name no other test uses. */
export function uniqueName(prefix = "t"): string {
  counter++;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

/** The chat agent class of this run: `ScriptedChatAgent`, or `OrderedChatAgent` with `E2E_CHAT_AGENT`. */
export const CHAT_AGENT = inject("chatAgent");
/** An agent class as its URL names it: `ScriptedChatAgent` → `scripted-chat-agent`. */
export const kebab = (agent: string) => agent.replace(/[A-Z]/g, (c, i) => (i ? "-" : "") + c.toLowerCase());
/** {@link CHAT_AGENT} as its URL names it. */
export const CHAT_AGENT_PATH = kebab(CHAT_AGENT);
/** The fixture's stock `AIChatAgent` (no ordered transcript). */
export const STOCK_AGENT = "ScriptedChatAgent";

let blockAgent: string | undefined;
/** The agent the helpers talk to by default: the run's, or the stock one inside a block that asked for it. */
export const runAgent = (): string => blockAgent ?? CHAT_AGENT;

/**
 * In this `describe` block the helpers talk to the stock agent, whichever the
 * run's is: its tests are about HTTP transcript reads, which an ordered agent
 * (exact sync) makes unnecessary.
 */
export function onStockAgent(): void {
  beforeAll(() => {
    blockAgent = STOCK_AGENT;
  });
  afterAll(() => {
    blockAgent = undefined;
  });
}

/** The HTTP base of one agent instance. */
export function agentUrl(name: string, agent = runAgent()): string {
  return `${agentOrigin()}/agents/${kebab(agent)}/${encodeURIComponent(name)}`;
}

export interface LogEntry {
  seq: number;
  at: number;
  kind: string;
  [field: string]: unknown;
}

/** What the agent saw: connections, frames, reads, turns. */
export async function readLog(name: string, agent = runAgent()): Promise<LogEntry[]> {
  const response = await fetch(`${agentUrl(name, agent)}/log`);
  expect(response.ok).toBe(true);
  return ((await response.json()) as { entries: LogEntry[] }).entries;
}

/** Waits until the agent's log has an entry matching `predicate`, and returns it. */
export async function waitForLog(
  name: string,
  predicate: (entry: LogEntry) => boolean,
  options: { agent?: string; timeout?: number } = {}
): Promise<LogEntry> {
  let found: LogEntry | undefined;
  await vi.waitFor(
    async () => {
      found = (await readLog(name, options.agent)).find(predicate);
      expect(found, "log entry").toBeDefined();
    },
    { timeout: options.timeout ?? 15_000, interval: 50 }
  );
  return found!;
}

/** Frames of one type the agent received. */
export async function framesOf(name: string, type: string, agent = runAgent()): Promise<LogEntry[]> {
  return (await readLog(name, agent)).filter((entry) => entry.kind === "frame" && entry.type === type);
}

/** The agent's stored transcript (not logged as a read). */
export async function stored(name: string, agent = runAgent()): Promise<UIMessage[]> {
  const response = await fetch(`${agentUrl(name, agent)}/stored`);
  expect(response.ok).toBe(true);
  return (await response.json()) as UIMessage[];
}

export async function post(name: string, route: string, body: unknown, agent = runAgent()): Promise<Response> {
  return fetch(`${agentUrl(name, agent)}/${route}`, {
    method: "POST",
    headers: { "content-type": typeof body === "string" ? "text/plain" : "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body)
  });
}

/** The text of a message's text parts, concatenated. */
export function textOf(message: UIMessage | undefined): string {
  if (!message) return "";
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** A transcript reduced to what two clients must agree on. */
export function shape(messages: readonly UIMessage[]) {
  return messages.map((message) => ({
    id: message.id,
    role: message.role,
    parts: message.parts.map((part) => (part.type === "text" ? `text:${part.text}` : part.type))
  }));
}
