/**
 * `npm run demo:check`: drives the chat demo in headless Chromium, the way a
 * person would, and saves a screenshot of every step in artifacts/demo/.
 * Starts the demo exactly as `npm run demo` does (startDemo), on a fresh
 * agent storage. Exits non-zero on the first failed step.
 */
import { mkdirSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, type Locator, type Page, chromium, expect } from "playwright/test";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { STARTUP_TIMEOUTS } from "../test/support/startup.ts";
import { freePort } from "../test/support/wrangler.ts";
import { storedMessages, storedText } from "../test/support/pages.ts";
import { type Demo, startDemo } from "./demo.ts";
import { AXE_TAGS, axeViolations } from "./demo-axe.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "artifacts", "demo");
const TIMEOUT = 20_000;

let shot = 0;
const problems: string[] = [];
/** While the agent is down on purpose, the browser logs every refused reconnect. */
let agentDown = false;
/** The frames of the step that restarts the agent, printed if the run fails. */
const wire: string[] = [];

async function screenshot(page: Page, name: string): Promise<void> {
  shot++;
  const file = join(OUT, `${String(shot).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file });
  console.log(`    screenshot ${file.slice(ROOT.length + 1)}`);
}

/** The longest a step may take; some Playwright calls (`evaluate`) wait forever on their own. */
const STEP_TIMEOUT = 120_000;

async function step(name: string, run: () => Promise<void>): Promise<void> {
  const started = Date.now();
  process.stdout.write(`  • ${name}\n`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`step "${name}" took over ${STEP_TIMEOUT / 1000} s`)), STEP_TIMEOUT);
  });
  try {
    await Promise.race([run(), timeout]);
  } finally {
    clearTimeout(timer);
  }
  console.log(`    ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** Collects what a page reports as broken: uncaught errors and console errors. */
function watchPage(page: Page, label: string): Page {
  page.on("pageerror", (error) => problems.push(`[${label}] uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    // The library's one probe of the agent's address (why the socket cannot open) is answered 502 by Vite's proxy
    // while the agent is down, or 404 by the agent itself (its onRequest) when it came back before the probe arrived.
    if (agentDown && /^(WebSocket connection to .* failed|Failed to load resource: the server responded with a status of (502|404))/.test(message.text())) return;
    problems.push(`[${label}] console.error: ${message.text()}`);
  });
  return page;
}

/** The states axe checked, for the summary line. */
const axeChecked: string[] = [];

/** Runs axe (WCAG 2 A and AA) on the page as it is now; any violation fails the run. */
async function assertAccessible(page: Page, state: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations.length > 0) {
    throw new Error(`axe found ${violations.length} violation(s) (${AXE_TAGS.join(", ")}) in "${state}":\n    ${violations.join("\n    ")}`);
  }
  axeChecked.push(state);
  console.log(`    axe: 0 violations (${state})`);
}

// --- what the page shows ----------------------------------------------------

const composer = (page: Page) => page.getByRole("textbox", { name: "Message" });
const log = (page: Page) => page.getByRole("log", { name: "Messages" });
const assistantMessages = (page: Page) => page.locator(".message[data-role='assistant']");
const userMessages = (page: Page) => page.locator(".message[data-role='user']");
const lastAssistant = (page: Page) => assistantMessages(page).last();

async function textOf(locator: Locator): Promise<string> {
  return (await locator.locator(".message__text").allInnerTexts()).join(" ").replace(/\s+/g, " ").trim();
}

/** The text of the last stored assistant message of `conversation`, joined as `textOf` joins the page's. */
async function storedLastReply(demo: Demo, conversation: string): Promise<string | undefined> {
  const reply = (await storedMessages(demo.worker.origin, conversation)).findLast((message) => message.role === "assistant");
  return reply && storedText(reply);
}

/** The text of the stored reply to `/story` in `conversation`, joined as `textOf` joins the page's. */
async function storedStory(demo: Demo, conversation: string): Promise<string | undefined> {
  const reply = (await storedMessages(demo.worker.origin, conversation)).find(
    (message) => message.role === "assistant" && message.parts.some((part) => part.text?.includes("Once upon a time"))
  );
  return reply && storedText(reply);
}

async function waitConnected(page: Page): Promise<void> {
  await expect(page.locator(".status[data-status='open']")).toBeVisible({ timeout: TIMEOUT });
}

/** The reply (and any server work after it) has finished. */
async function waitIdle(page: Page): Promise<void> {
  await expect(log(page)).toHaveAttribute("aria-busy", "false", { timeout: TIMEOUT });
}

/** Sends `text` from the composer; returns the reply's locator (the next assistant message). */
async function send(page: Page, text: string): Promise<Locator> {
  const replies = await assistantMessages(page).count();
  await composer(page).fill(text);
  await composer(page).press("Enter");
  await expect(composer(page)).toHaveValue("");
  return assistantMessages(page).nth(replies);
}

/** Waits until `message` shows at least `minLength` characters of text. */
async function waitForWords(message: Locator, minLength: number): Promise<string> {
  let text = "";
  await expect
    .poll(
      async () => {
        text = (await message.count()) > 0 ? await textOf(message) : "";
        return text.length;
      },
      { timeout: TIMEOUT }
    )
    .toBeGreaterThanOrEqual(minLength);
  return text;
}

/** What two tabs must agree on: each message's role and visible text. */
async function transcript(page: Page): Promise<string[]> {
  return page
    .locator(".message[data-message-id]")
    .evaluateAll((elements) =>
      elements.map((element) => `${element.getAttribute("data-role")}: ${(element as HTMLElement).innerText.replace(/\s+/g, " ").trim()}`)
    );
}

// --- the run ----------------------------------------------------------------

async function run(demo: Demo, browser: Browser): Promise<void> {
  const context: BrowserContext = await browser.newContext({
    viewport: { width: 1280, height: 820 },
    deviceScaleFactor: 1,
    colorScheme: "light"
  });
  const page = watchPage(await context.newPage(), "tab 1");
  const conversationUrl = `${demo.url}#/c/welcome`;

  await step("the page loads and connects", async () => {
    // The first load has Vite transform every module: on a busy machine that alone can take over 30 s.
    await page.goto(conversationUrl, { timeout: 90_000 });
    await waitConnected(page);
    await expect(page.getByRole("heading", { name: "Chat with an AIChatAgent from Vue" })).toBeVisible();
    await expect(composer(page)).toBeFocused();
    await screenshot(page, "empty-state");
  });
  void startThinkDemo();

  await step("a message gets a streamed reply", async () => {
    const reply = await send(page, "How do Vue composables work?");
    await expect(userMessages(page).last()).toContainText("How do Vue composables work?");
    const partial = await waitForWords(reply, 12);
    await expect(log(page)).toHaveAttribute("aria-busy", "true");
    await screenshot(page, "reply-streaming");
    await waitIdle(page);
    const full = await textOf(reply);
    if (!full.includes("How do Vue composables work?")) throw new Error(`the reply does not echo the question: ${full}`);
    if (full.length <= partial.length) throw new Error("the reply did not grow while streaming");
    await expect(composer(page)).toBeFocused();
    await screenshot(page, "reply-complete");
  });

  await step("Shift+Enter adds a new line instead of sending", async () => {
    const before = await userMessages(page).count();
    await composer(page).fill("line one");
    await composer(page).press("Shift+Enter");
    await composer(page).pressSequentially("line two");
    await expect(composer(page)).toHaveValue("line one\nline two");
    expect(await userMessages(page).count()).toBe(before);
    await composer(page).fill("");
  });

  await step("the client tool runs in the browser and its result is shown", async () => {
    await send(page, "/time");
    const card = page.locator(".tool-card[data-tool='getLocalTime']").last();
    await expect(card).toHaveAttribute("data-state", "complete", { timeout: TIMEOUT });
    await expect(card).toContainText("runs in your browser");
    await expect(card).toContainText("timeZone");
    await waitIdle(page);
    await expect(lastAssistant(page)).toContainText("where you are");
    await screenshot(page, "client-tool");
  });

  await step("an approval card: approve", async () => {
    await send(page, "/approve");
    const card = page.locator(".tool-card[data-tool='deleteItem']").last();
    await expect(card).toHaveAttribute("data-state", "waiting-approval", { timeout: TIMEOUT });
    await waitIdle(page);
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "approval-requested");
    await card.getByRole("button", { name: "Approve" }).click();
    await expect(composer(page)).toBeFocused();
    await expect(card).toHaveAttribute("data-state", "complete", { timeout: TIMEOUT });
    await expect(card).toContainText("deleted");
    await waitIdle(page);
    await expect(lastAssistant(page)).toContainText("is gone");
    await screenshot(page, "approval-approved");
  });

  await step("an approval card: deny", async () => {
    await send(page, "Please delete the meeting notes");
    const card = page.locator(".tool-card[data-tool='deleteItem']").last();
    await expect(card).toHaveAttribute("data-state", "waiting-approval", { timeout: TIMEOUT });
    await expect(card).toContainText("meeting notes");
    await waitIdle(page);
    await card.getByRole("button", { name: "Deny" }).click();
    await expect(card).toHaveAttribute("data-state", "denied", { timeout: TIMEOUT });
    await waitIdle(page);
    await expect(lastAssistant(page)).toContainText("left “meeting notes” alone");
    await screenshot(page, "approval-denied");
  });

  const page2 = watchPage(await context.newPage(), "tab 2");
  await step("a second tab on the same conversation converges", async () => {
    await page2.goto(conversationUrl);
    await waitConnected(page2);
    await expect.poll(() => transcript(page2), { timeout: TIMEOUT }).toEqual(await transcript(page));
    // A message sent in the second tab streams into the first.
    const replies = await assistantMessages(page).count();
    await send(page2, "Hello from the second tab");
    await expect(userMessages(page).last()).toContainText("Hello from the second tab", { timeout: TIMEOUT });
    await waitForWords(assistantMessages(page).nth(replies), 20);
    await screenshot(page, "sync-tab1-streaming");
    await waitIdle(page2);
    await waitIdle(page);
    await expect.poll(() => transcript(page), { timeout: TIMEOUT }).toEqual(await transcript(page2));
    await screenshot(page2, "sync-tab2");
  });

  await step("a reload mid-reply resumes the stream and the reply completes", async () => {
    const reply = await send(page, "/story");
    const before = await waitForWords(reply, 80);
    if (before.includes("The end.")) throw new Error("the reply finished before the reload");
    const index = (await assistantMessages(page).count()) - 1;
    await page.reload();
    await waitConnected(page);
    // The reply reappears (the stream resumes) before it has finished.
    const resumed = assistantMessages(page).nth(index);
    const early = await waitForWords(resumed, 20);
    if (early.includes("The end.")) throw new Error("the reply was already complete after the reload: nothing was resumed");
    await screenshot(page, "reload-resuming");
    await expect(resumed).toContainText("The end.", { timeout: 30_000 });
    await waitIdle(page);
    expect(await assistantMessages(page).count()).toBe(index + 1);
    const after = await textOf(resumed);
    if (!after.startsWith(before.slice(0, 60))) throw new Error(`the resumed reply does not start like the original: ${after.slice(0, 120)}`);
    const starts = after.split("Once upon a time").length - 1;
    if (starts !== 1) throw new Error(`the resumed reply repeats itself (${starts} starts): ${after}`);
    await expect.poll(() => transcript(page2), { timeout: TIMEOUT }).toEqual(await transcript(page));
    await screenshot(page, "reload-complete");
  });

  await step("stop mid-reply, then regenerate", async () => {
    const reply = await send(page, "/story");
    await waitForWords(reply, 60);
    await page.getByRole("button", { name: "Stop" }).click();
    await waitIdle(page);
    // The stopped reply ends as the agent stored it: the chunks it sent before it took the cancel are read back.
    await expect.poll(async () => (await textOf(lastAssistant(page))) === (await storedLastReply(demo, "welcome")), { timeout: TIMEOUT }).toBe(true);
    const stopped = await textOf(lastAssistant(page));
    await page.waitForTimeout(1_000);
    const later = await textOf(lastAssistant(page));
    if (later !== stopped) throw new Error("the reply kept growing after Stop");
    if (stopped.includes("The end.")) throw new Error("Stop came too late to interrupt the reply");
    // The stopped reply says so, and only that reply.
    await expect(lastAssistant(page).locator(".badge--stopped")).toHaveText("Stopped");
    await expect(page.locator(".badge--stopped")).toHaveCount(1);
    await screenshot(page, "stopped");
    await assertAccessible(page, "light: a stopped reply");
    const replies = await assistantMessages(page).count();
    await page.getByRole("button", { name: "Regenerate" }).click();
    await expect(lastAssistant(page)).toContainText("The end.", { timeout: 30_000 });
    await waitIdle(page);
    expect(await assistantMessages(page).count()).toBe(replies);
    // The new reply ran to its end: no "Stopped" mark on it.
    await expect(page.locator(".badge--stopped")).toHaveCount(0);
    await screenshot(page, "regenerated");
  });

  await step("switching conversations keeps each transcript", async () => {
    const welcome = await transcript(page);
    await page.getByRole("button", { name: "Trip ideas" }).click();
    await expect(page).toHaveURL(/#\/c\/trip-ideas$/);
    await waitConnected(page);
    await expect(page.getByRole("heading", { name: "Chat with an AIChatAgent from Vue" })).toBeVisible();
    await expect(composer(page)).toBeFocused();
    await send(page, "Where should I go in spring?");
    await waitIdle(page);
    await expect(lastAssistant(page)).toContainText("Where should I go in spring?");
    await screenshot(page, "conversation-switched");
    await page.getByRole("button", { name: "Welcome" }).click();
    await waitConnected(page);
    await expect.poll(() => transcript(page), { timeout: TIMEOUT }).toEqual(welcome);
  });

  await step("a new chat is a new agent instance, titled by its first message", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(page).toHaveURL(/#\/c\/chat-[a-z0-9]+$/);
    await waitConnected(page);
    await expect(composer(page)).toBeFocused();
    await send(page, "Plan a picnic for Saturday");
    await waitIdle(page);
    await expect(page.locator(".conversation[aria-current='page']")).toContainText("Plan a picnic for Saturday");
    await page.getByRole("button", { name: "Welcome" }).click();
    await waitConnected(page);
  });

  await step("clear asks first; Cancel keeps the messages", async () => {
    // The conversation was just reopened: its stored transcript may still be loading.
    await waitIdle(page);
    await expect(page.locator(".badge--stopped")).toHaveCount(0);
    await expect.poll(async () => (await transcript(page)).length, { timeout: TIMEOUT }).toBeGreaterThan(0);
    const before = await transcript(page);
    await page.getByRole("button", { name: "Clear conversation" }).click();
    const dialog = page.getByRole("dialog", { name: "Clear this conversation?" });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
    await screenshot(page, "clear-confirm");
    await assertAccessible(page, "light: the clear confirmation");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    expect(await transcript(page)).toEqual(before);
    // Escape cancels too.
    await page.getByRole("button", { name: "Clear conversation" }).click();
    await expect(dialog).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
    await page.waitForTimeout(300);
    expect(await transcript(page)).toEqual(before);
  });

  await step("clear empties the conversation in both tabs", async () => {
    await page.getByRole("button", { name: "Clear conversation" }).click();
    await page.getByRole("dialog", { name: "Clear this conversation?" }).getByRole("button", { name: "Clear conversation" }).click();
    await expect(page.getByRole("heading", { name: "Chat with an AIChatAgent from Vue" })).toBeVisible();
    await expect(page2.locator(".message[data-message-id]")).toHaveCount(0, { timeout: TIMEOUT });
    await screenshot(page2, "cleared");
  });

  await step("the agent goes down mid-reply: reconnecting, a queued message, recovery", async () => {
    await page.getByRole("button", { name: "Scratchpad" }).click();
    await waitConnected(page);
    // What the server says on the wire, to tell a silent server from a silent page.
    const framesSeen = new Set<string>();
    const started = Date.now();
    const note = (direction: string, payload: string | Buffer) => {
      const text = typeof payload === "string" ? payload : `<${payload.length} bytes>`;
      wire.push(`${String(Date.now() - started).padStart(6)} ms ${direction} ${text.slice(0, 220)}`);
    };
    page.on("websocket", (socket) => {
      note("open", socket.url());
      socket.on("close", () => note("closed", socket.url()));
      socket.on("framesent", ({ payload }) => note("->", payload));
      socket.on("framereceived", ({ payload }) => {
        note("<-", payload);
        const type = typeof payload === "string" ? /"type":"(cf_agent_[a-z_]+)"/.exec(payload)?.[1] : undefined;
        if (type) framesSeen.add(type);
      });
    });
    const reply = await send(page, "/story");
    await waitForWords(reply, 60);
    agentDown = true;
    await demo.stopAgent();
    await expect(page.locator(".status[data-status='connecting']")).toContainText("Reconnecting", { timeout: TIMEOUT });
    await send(page, "Are you still there?");
    await expect(page.locator(".message--queued")).toContainText("Queued", { timeout: TIMEOUT });
    await screenshot(page, "agent-down-queued");
    await assertAccessible(page, "light: agent down, a message queued");
    // Note whether the "recovering" indicator ever shows while the agent comes back.
    await page.evaluate(() => {
      const flag = window as unknown as { sawRecovering?: boolean };
      flag.sawRecovering = false;
      new MutationObserver(() => {
        if (document.querySelector(".banner--info")) flag.sawRecovering = true;
      }).observe(document.body, { subtree: true, childList: true });
    });
    await demo.startAgent();
    console.log("    agent restarted");
    await waitConnected(page);
    console.log("    page reconnected");
    await expect(page.locator(".message--queued")).toHaveCount(0, { timeout: TIMEOUT });
    // A probe that left during the outage may be answered only now.
    agentDown = false;
    console.log("    queued message sent");
    await expect(lastAssistant(page)).toContainText("Are you still there?", { timeout: 30_000 });
    await waitIdle(page);
    const sawRecovering = await page.evaluate(() => (window as unknown as { sawRecovering?: boolean }).sawRecovering === true);
    const story = await textOf(reply);
    // The page must show the reply exactly as the agent stored it. When the
    // restart lands at some points of a stream, AIChatAgent's recovery stores
    // the recovered text as a second text part from the first word (see
    // RELIABILITY.md); that is the server's transcript, so it is reported, not failed.
    const stored = await storedStory(demo, "scratchpad");
    if (stored === undefined) throw new Error("the agent stored no reply to /story");
    if (stored !== story) throw new Error(`the page shows a reply the agent did not store:\n  page:   ${story}\n  stored: ${stored}`);
    const starts = story.split("Once upon a time").length - 1;
    if (starts === 0) throw new Error(`the interrupted reply lost its start: ${story}`);
    console.log(
      `    interrupted reply: ${story.includes("The end.") ? "completed by the server's recovery" : "left as it was"}` +
        `${starts > 1 ? " (the server's recovery stored its start twice; the page shows it as stored)" : ""}; ` +
        `"recovering" indicator ${sawRecovering ? "shown" : "never shown"}; ` +
        `cf_agent_chat_recovering frames: ${framesSeen.has("cf_agent_chat_recovering") ? "received" : "none"}`
    );
    await screenshot(page, "agent-back");
  });

  await step("a message queued while the agent is down survives a reload (persist) and is sent once when it is back", async () => {
    const question = "Still there after a reload?";
    await waitConnected(page);
    await waitIdle(page);
    agentDown = true;
    await demo.stopAgent();
    await expect(page.locator(".status[data-status='connecting']")).toContainText("Reconnecting", { timeout: TIMEOUT });
    await send(page, question);
    await expect(page.locator(".message--queued")).toContainText("Queued", { timeout: TIMEOUT });
    await page.reload();
    // The agent is still down: the kept transcript and the queued message are back from the browser's storage.
    await expect(page.locator(".message--queued")).toContainText(question, { timeout: TIMEOUT });
    await expect(page.locator(".message--queued")).toContainText("Queued");
    await screenshot(page, "queued-after-reload");
    await demo.startAgent();
    await waitConnected(page);
    await expect(page.locator(".message--queued")).toHaveCount(0, { timeout: TIMEOUT });
    agentDown = false;
    await expect(lastAssistant(page)).toContainText(question, { timeout: 30_000 });
    await waitIdle(page);
    await expect(page.locator(".message--user", { hasText: question })).toHaveCount(1);
    const stored = await storedMessages(demo.worker.origin, "scratchpad");
    const sent = stored.filter((message) => message.role === "user" && message.parts.some((part) => part.text === question));
    if (sent.length !== 1) throw new Error(`the agent stored the queued message ${sent.length} times`);
  });

  await step("phone width: the sidebar becomes a drawer", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true });
    const mobile = watchPage(await phone.newPage(), "phone");
    await mobile.goto(`${demo.url}#/c/trip-ideas`);
    await waitConnected(mobile);
    await expect(mobile.getByRole("button", { name: "Trip ideas" })).toBeHidden();
    await screenshot(mobile, "phone");
    const menu = mobile.getByRole("button", { name: "Open conversations" });
    await menu.click();
    await expect(mobile.getByRole("button", { name: "Trip ideas" })).toBeFocused();
    await screenshot(mobile, "phone-drawer");
    await mobile.keyboard.press("Escape");
    await expect(menu).toBeFocused();
    await expect(menu).toHaveAttribute("aria-expanded", "false");
    await phone.close();
  });

  // axe runs in pages of their own for these states: axe in the first tab before its
  // reload slowed that tab enough for the story to finish before the reload step could see it resume.
  for (const scheme of ["light", "dark"] as const) {
    await step(`${scheme} mode: axe on an empty conversation, tool cards, an approval and the clear confirmation`, async () => {
      const themed = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: scheme });
      const themedPage = watchPage(await themed.newPage(), scheme);
      await themedPage.goto(`${demo.url}#/c/${scheme}-empty`);
      await waitConnected(themedPage);
      await expect(themedPage.getByRole("heading", { name: "Chat with an AIChatAgent from Vue" })).toBeVisible();
      if (scheme === "dark") await screenshot(themedPage, "dark-empty-state");
      await assertAccessible(themedPage, `${scheme}: empty conversation`);
      // Each theme in a conversation of its own (an approval is left waiting in it).
      await themedPage.getByRole("button", { name: scheme === "light" ? "Welcome" : "Trip ideas" }).click();
      await waitConnected(themedPage);
      await waitIdle(themedPage);
      const cards = await themedPage.locator(".tool-card").count();
      await send(themedPage, "/time");
      await expect(themedPage.locator(".tool-card[data-tool='getLocalTime']").last()).toHaveAttribute("data-state", "complete", { timeout: TIMEOUT });
      await waitIdle(themedPage);
      await send(themedPage, "/approve");
      await expect(themedPage.locator(".tool-card[data-state='waiting-approval']").last()).toBeVisible({ timeout: TIMEOUT });
      await waitIdle(themedPage);
      expect(await themedPage.locator(".tool-card").count()).toBeGreaterThan(cards);
      await themedPage.getByText("Composable state").click();
      await screenshot(themedPage, scheme);
      await assertAccessible(themedPage, `${scheme}: tool cards, an approval waiting, the state inspector`);
      await themedPage.getByRole("button", { name: "Clear conversation" }).click();
      await expect(themedPage.getByRole("dialog", { name: "Clear this conversation?" })).toBeVisible();
      await screenshot(themedPage, `${scheme}-clear-confirm`);
      await assertAccessible(themedPage, `${scheme}: the clear confirmation`);
      await themedPage.keyboard.press("Escape");
      await themed.close();
    });
  }

  await context.close();
}

/**
 * The demo on Think (`DEMO_AGENT=think npm run demo`), checked once: the page
 * connects, a message streams its reply, and the reply shown is the one Think
 * stores. Its worker starts while the main run goes on, so it adds little.
 */
let thinkDemo: Promise<Demo> | undefined;
/** The page typesets quotes (’ for '); the stored text has the model's. */
const plain = (text: string | undefined) => text?.replace(/[‘’]/g, "'").replace(/[“”]/g, '"');
/** Starts the demo on Think in the background (once); set by `main`. */
let startThinkDemo = async (): Promise<void> => {};

async function runThink(demo: Demo, browser: Browser): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
  const page = watchPage(await context.newPage(), "think");
  await step("on Think (DEMO_AGENT=think): a message streams its reply, shown as Think stores it", async () => {
    await page.goto(`${demo.url}#/c/think-check`);
    await waitConnected(page);
    const reply = await send(page, "How do Vue composables work?");
    await waitForWords(reply, 12);
    await waitIdle(page);
    const shown = await textOf(reply);
    if (!shown.includes("How do Vue composables work?")) throw new Error(`the reply does not echo the question: ${shown}`);
    await expect.poll(async () => plain(await storedLastReply(demo, "think-check")), { timeout: TIMEOUT }).toBe(plain(shown));
    await screenshot(page, "think-reply");
  });
  await context.close();
}

async function main(): Promise<void> {
  const started = Date.now();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const persistTo = await mkdtemp(join(tmpdir(), "agents-vue-demo-check-"));

  console.log("demo:check — starting the demo (wrangler dev + Vite)…");
  // No file watching: an edit to the library mid-run must not reload the pages under test.
  const demo = await startDemo({ persistTo, logFile: join(OUT, "wrangler.log"), logLevel: "warn", watch: false });
  // The demo on Think starts during the main run, once its page has loaded (its worker is slow to
  // start), and is checked after it.
  const thinkPersist = await mkdtemp(join(tmpdir(), "agents-vue-demo-check-think-"));
  startThinkDemo = async () => {
    thinkDemo ??= startDemo({
      agent: "think",
      port: await freePort(),
      persistTo: thinkPersist,
      logFile: join(OUT, "wrangler-think.log"),
      logLevel: "warn",
      watch: false
    });
    thinkDemo.catch(() => undefined);
  };
  console.log(`  demo at ${demo.url} (agent ${demo.worker.origin}), ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  let browser: Browser | undefined;
  let failed = false;
  try {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, headless: true, timeout: STARTUP_TIMEOUTS.browserLaunchMs });
    await run(demo, browser);
    await startThinkDemo();
    await runThink(await thinkDemo!, browser);
  } catch (error) {
    failed = true;
    console.error(`\n  FAILED: ${error instanceof Error ? error.message : String(error)}`);
    for (const context of browser?.contexts() ?? []) {
      for (const [index, page] of context.pages().entries()) {
        await page.screenshot({ path: join(OUT, `failure-${index + 1}.png`) }).catch(() => undefined);
      }
    }
    if (wire.length > 0) console.error(`  frames of the restart step (last 200):\n${wire.slice(-200).join("\n")}`);
    console.error(`  wrangler's last lines:\n${demo.worker.recentOutput().split("\n").slice(-15).join("\n")}`);
  } finally {
    await browser?.close().catch(() => undefined);
    await demo.stop();
    await (await thinkDemo?.catch(() => undefined))?.stop();
    rmSync(persistTo, { recursive: true, force: true });
    rmSync(thinkPersist, { recursive: true, force: true });
  }

  if (problems.length > 0) {
    failed = true;
    console.error(`\n  The pages reported ${problems.length} error(s):\n${problems.map((line) => `    ${line}`).join("\n")}`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (!failed) console.log(`\n  axe (${AXE_TAGS.join(", ")}): 0 violations in ${axeChecked.length} states, light and dark`);
  console.log(failed ? `\ndemo:check failed after ${seconds} s` : `\ndemo:check passed in ${seconds} s (screenshots in artifacts/demo/)`);
  process.exit(failed ? 1 : 0);
}

await main();
