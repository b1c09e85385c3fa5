/**
 * Driving an app's chat page in Chromium, for the scripts that check whole
 * apps (`npm run test:consumer`, `example:nuxt`, `example:starter`): the agent
 * socket's frames, a question typed and its streamed reply, a page that must
 * report no error. Plain Node 22.
 */
import type { Browser, Page } from "playwright";
import { check } from "./steps.ts";

export interface Frame {
  type?: string;
  id?: string;
  body?: string;
  done?: boolean;
  error?: boolean;
  init?: { body?: string };
}

/** Every frame the page's agent sockets sent and received, parsed. */
export function watchAgentSockets(page: Page): { sent: Frame[]; received: Frame[] } {
  const frames = { sent: [] as Frame[], received: [] as Frame[] };
  const parse = (payload: string | Buffer): Frame => {
    try {
      return JSON.parse(payload.toString()) as Frame;
    } catch {
      return {};
    }
  };
  page.on("websocket", (socket) => {
    if (!socket.url().includes("/agents/")) return;
    socket.on("framesent", ({ payload }) => frames.sent.push(parse(payload)));
    socket.on("framereceived", ({ payload }) => frames.received.push(parse(payload)));
  });
  return frames;
}

/** Polls `read` every 50 ms until it gives a value other than `undefined`. */
export async function until<T>(read: () => T | undefined | Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((wait) => setTimeout(wait, 50));
  }
}

/** Letters and digits only, single-spaced: the reply as any renderer (plain text, markdown) shows it. */
export const plain = (text: string) => text.replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/** A message as the agent's `/get-messages` route returns it: the fields the checks read. */
export interface StoredMessage {
  role: string;
  parts: Array<{ type: string; text?: string }>;
}

/** The transcript the chat agent at `origin` stores for `conversation`. */
export async function storedMessages(origin: string, conversation: string): Promise<StoredMessage[]> {
  const response = await fetch(`${origin}/agents/chat-agent/${conversation}/get-messages`);
  return (await response.json()) as StoredMessage[];
}

/** A stored message's text parts, joined by single spaces and trimmed (`""` for no message). */
export const storedText = (message: StoredMessage | undefined): string =>
  (message?.parts.flatMap((part) => (part.type === "text" && part.text ? [part.text] : [])) ?? []).join(" ").replace(/\s+/g, " ").trim();

export interface StreamedReply {
  /** The reply text, from the text deltas the agent streamed. */
  text: string;
  deltas: number;
  /** The chat request's body, as the page sent it. */
  requestBody: Record<string, unknown>;
}

/**
 * Types `question` into the page's chat input and sends it with Enter; waits
 * for the agent's streamed reply to finish and for the page to show it.
 */
export async function askAndStream(page: Page, frames: ReturnType<typeof watchAgentSockets>, question: string): Promise<StreamedReply> {
  const input = page.getByTestId("chat-input").or(page.getByRole("textbox")).first();
  await input.waitFor({ timeout: 20_000 });
  const sentBefore = frames.sent.length;
  await input.fill(question);
  await input.press("Enter");
  const request = await until(
    () => frames.sent.slice(sentBefore).find((frame) => frame.type === "cf_agent_use_chat_request"),
    15_000,
    `the page to send "${question}"`
  );
  const responses = () => frames.received.filter((frame) => frame.type === "cf_agent_use_chat_response" && frame.id === request.id);
  const last = await until(() => responses().find((frame) => frame.done), 30_000, `the reply to "${question}" to finish`);
  check(!last.error, `the agent answered "${question}" with an error: ${last.body}`);
  const deltas = responses()
    .map((frame) => (frame.body ? (JSON.parse(frame.body) as { type?: string; delta?: string }) : {}))
    .filter((chunk) => chunk.type === "text-delta")
    .map((chunk) => chunk.delta ?? "");
  check(deltas.length >= 2, `the reply to "${question}" came in ${deltas.length} text delta(s), not as a stream`);
  const text = deltas.join("");
  await page
    .waitForFunction((expected) => document.body.innerText.replace(/[^\p{L}\p{N}]+/gu, " ").includes(expected), plain(text), {
      timeout: 15_000
    })
    .catch(() => {
      throw new Error(`the page does not show the reply "${text}"`);
    });
  return { text, deltas: deltas.length, requestBody: JSON.parse(request.init?.body ?? "{}") as Record<string, unknown> };
}

/** How `withPage` opens its page. */
export interface PageOptions {
  viewport?: { width: number; height: number };
  colorScheme?: "light" | "dark";
  /** Console errors and warnings the page may print: a check that provokes them on purpose. */
  expected?: RegExp;
  /** Runs before the page loads (init scripts, routes). */
  before?: (page: Page) => Promise<void>;
}

/** Opens `url` in a fresh page; fails on any page error, console error or warning (but `expected` ones). */
export async function withPage<T>(
  browser: Browser,
  url: string,
  use: (page: Page, frames: ReturnType<typeof watchAgentSockets>) => Promise<T>,
  options: PageOptions = {}
): Promise<T> {
  const context = await browser.newContext({
    ...(options.viewport ? { viewport: options.viewport } : {}),
    ...(options.colorScheme ? { colorScheme: options.colorScheme } : {})
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => {
    if (message.type() !== "error" && message.type() !== "warning") return;
    if (!options.expected?.test(message.text())) problems.push(`${message.type()}: ${message.text()}`);
  });
  const frames = watchAgentSockets(page);
  try {
    await options.before?.(page);
    await page.goto(url);
    const result = await use(page, frames);
    check(problems.length === 0, `${url} reported:\n${problems.join("\n")}`);
    return result;
  } catch (error) {
    if (problems.length === 0) throw error;
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${url} also reported:\n${problems.join("\n")}`, {
      cause: error
    });
  } finally {
    await context.close();
  }
}
