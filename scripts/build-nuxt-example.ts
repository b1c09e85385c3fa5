/**
 * `npm run example:nuxt`: the Nuxt example (Nuxt UI's chat components) built
 * and driven as a person would use it.
 *
 * 1. installs examples/nuxt from its own lockfile (kept out of the root
 *    node_modules; skipped when its node_modules is up to date);
 * 2. `nuxt build`, offline (no web fonts, icons from the installed collection);
 * 3. starts the chat demo's agent (wrangler dev) and the built Nitro server;
 *    `/` is server-rendered HTML with the <ClientOnly> fallback, no SSR error;
 * 4. in headless Chromium: a reply streams in `UChatMessages`;
 * 5. the server's HTML for that conversation holds the stored messages, and a
 *    fresh page shows them without reading `/get-messages` on its first open;
 * 6. a reply renders as Markdown (bold, a list, code) live and in the
 *    server's HTML; HTML in a reply shows as text; after the reply, its first
 *    line and the composer are both in view, and the code block's copy
 *    button covers none of its code (desktop and phone sizes);
 * 7. Stop stops this tab's reply (the agent is told, the text stops growing);
 * 8. a turn sent from a second tab shows as streaming in the first
 *    (`UChatMessages` and the submit button), then settles.
 * No page may report an error or a warning, and the agent's `wrangler dev`
 * no network failure (it runs offline). Screenshot: artifacts/nuxt/page.png.
 *
 * Exits non-zero on any failure. `--skip-install` reuses examples/nuxt/node_modules as is.
 */
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type Page, chromium, expect } from "playwright/test";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { STARTUP_TIMEOUTS } from "../test/support/startup.ts";
import { startNitro, type NitroServer } from "../test/support/nitro.ts";
import { askAndStream, plain, storedMessages, storedText, until, withPage } from "../test/support/pages.ts";
import { check, createSteps, run } from "../test/support/steps.ts";
import { startWorker, type WorkerServer } from "../test/support/wrangler.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const APP = join(ROOT, "examples", "nuxt");
const WORKER_CONFIG = join(ROOT, "examples", "chat", "worker", "wrangler.jsonc");
const OUT = join(ROOT, "artifacts", "nuxt");
const quietEnv = { ...process.env, NUXT_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" };
const TIMEOUT = 20_000;

const { step: phase, summary } = createSteps();

function installIsCurrent(): boolean {
  const marker = join(APP, "node_modules", ".package-lock.json");
  return existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(APP, "package-lock.json")).mtimeMs;
}

/** The page's text content as a person reads it: tags dropped, entities decoded, letters and digits only. */
function htmlText(html: string): string {
  const withoutScripts = html.replace(/<script\b[\s\S]*?<\/script>/gi, " ");
  const text = withoutScripts
    .replace(/<[^>]+>/g, " ")
    .replace(/&(#\d+|#x[\da-f]+|[a-z]+);/gi, (entity, code: string) => {
      if (code.startsWith("#x")) return String.fromCodePoint(Number.parseInt(code.slice(2), 16));
      if (code.startsWith("#")) return String.fromCodePoint(Number(code.slice(1)));
      return ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " } as Record<string, string>)[code] ?? entity;
    });
  return plain(text);
}

const messagesList = (page: Page) => page.getByTestId("chat-messages");
const submitButton = (page: Page) => page.getByTestId("chat-submit");

const ASSISTANT = '[data-testid="chat-messages"] [data-slot="root"][data-role="assistant"]';
/** The assistant's messages as `UChatMessages` renders them (not its empty "thinking" indicator). */
const assistantTexts = async (page: Page) =>
  (await page.locator(ASSISTANT).evaluateAll((nodes) => nodes.map((node) => node.textContent?.trim() ?? ""))).filter(Boolean);

/**
 * "" when the copy button of the last reply's code block covers none of its code, else what it covers: each text
 * line's box against the button's (shown on hover on wide screens, always on narrow ones).
 */
function copyButtonOverlap(page: Page): Promise<string> {
  return page.evaluate((selector) => {
    const pre = [...document.querySelectorAll(selector)].at(-1)?.querySelector("pre");
    const button = pre?.parentElement?.querySelector(":scope > button");
    if (!pre || !button) return "the reply's code block or its copy button is missing";
    const box = button.getBoundingClientRect();
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const line of range.getClientRects()) {
        if (line.width === 0 || line.height === 0) continue;
        const overlaps = line.left < box.right && line.right > box.left && line.top < box.bottom && line.bottom > box.top;
        if (overlaps) return `the copy button (${box.left.toFixed(0)}–${box.right.toFixed(0)} × ${box.top.toFixed(0)}–${box.bottom.toFixed(0)} px) covers code "${node.textContent?.trim().slice(0, 40)}" (${line.left.toFixed(0)}–${line.right.toFixed(0)} px)`;
      }
    }
    return "";
  }, ASSISTANT);
}

async function main(): Promise<void> {
  const started = Date.now();
  mkdirSync(OUT, { recursive: true });

  if (process.argv.includes("--skip-install") || installIsCurrent()) {
    console.log("• install: examples/nuxt/node_modules is up to date, skipped");
  } else {
    await phase("install (npm ci in examples/nuxt)", () =>
      run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: APP, env: quietEnv })
    );
  }

  await phase("build (nuxt build)", () =>
    run(process.execPath, [realpathSync(join(APP, "node_modules", ".bin", "nuxt")), "build"], { cwd: APP, env: quietEnv, quiet: true })
  );

  let worker: WorkerServer | undefined;
  let nitro: NitroServer | undefined;
  let browser: Browser | undefined;
  try {
    worker = await phase("start the chat demo's agent (wrangler dev)", () => startWorker({ configPath: WORKER_CONFIG }));
    const agentHost = worker.host;
    const agentOrigin = worker.origin;
    nitro = await phase("start the built server (node .output/server/index.mjs)", () =>
      startNitro(APP, { ...quietEnv, NUXT_PUBLIC_AGENT_HOST: agentHost })
    );
    const server = nitro;
    const conversation = `nuxt-check-${Date.now().toString(36)}`;
    const pageUrl = `${server.origin}/?c=${conversation}`;
    const transcript = () => storedMessages(agentOrigin, conversation);
    /** The text of the last reply the agent stored, as `plain` gives it. */
    const storedReply = async () => plain(storedText((await transcript()).findLast((message) => message.role === "assistant")));

    await phase("server render of / (SSR)", async () => {
      const response = await fetch(server.origin);
      const html = await response.text();
      check(response.status === 200, `GET / answered ${response.status}:\n${html.slice(0, 500)}`);
      check(response.headers.get("content-type")?.includes("text/html"), "GET / is not HTML");
      check(html.includes("agents-vue in Nuxt</h1>"), "the server did not render the page");
      check(html.includes('data-testid="chat-placeholder"'), "the <ClientOnly> fallback is missing from the server HTML");
      check(!html.includes('data-testid="agent-chat"'), "the live chat was rendered on the server; it must be client-only");
      check(!/\[nuxt\]|\[request error\]|error/i.test(server.output()), `the server logged an error:\n${server.output()}`);
    });

    browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, headless: true, timeout: STARTUP_TIMEOUTS.browserLaunchMs });
    const openBrowser = browser;

    let question = "";
    let reply = "";
    await phase("a reply streams in UChatMessages", async () => {
      await withPage(openBrowser, pageUrl, async (page, frames) => {
        await page.getByTestId("agent-chat").waitFor({ timeout: TIMEOUT });
        await expect(page.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
        // Record every status UChatMessages shows, from before the question to the end of the reply.
        await page.evaluate(() => {
          const list = document.querySelector('[data-testid="chat-messages"]')!;
          const seen = ((window as unknown as { statuses: string[] }).statuses = [list.getAttribute("data-status") ?? ""]);
          new MutationObserver(() => {
            const status = list.getAttribute("data-status") ?? "";
            if (seen.at(-1) !== status) seen.push(status);
          }).observe(list, { attributes: true, attributeFilter: ["data-status"] });
        });
        question = "Does SSR work?";
        const streamed = await askAndStream(page, frames, question);
        reply = streamed.text;
        check(reply.includes(question), `the demo agent's reply does not echo the question: "${reply}"`);
        await expect(messagesList(page)).toHaveAttribute("data-status", "ready", { timeout: TIMEOUT });
        const statuses = await page.evaluate(() => (window as unknown as { statuses: string[] }).statuses);
        check(statuses.includes("streaming"), `UChatMessages never showed the reply as streaming (statuses: ${statuses.join(" → ")})`);
        const shown = (await assistantTexts(page)).at(-1) ?? "";
        check(plain(shown).includes(plain(reply)), `UChatMessages shows "${shown}", not the reply`);
        await page.screenshot({ path: join(OUT, "page.png") });
      });
    });

    await phase("the server's HTML holds the stored messages; the first open reads nothing", async () => {
      const stored = await transcript();
      check(stored.length === 2, `the agent stored ${stored.length} messages, not the question and its reply`);
      const html = await (await fetch(pageUrl)).text();
      const text = htmlText(html);
      check(text.includes(plain(question)), "the server's HTML does not hold the stored question");
      check(text.includes(plain(reply)), "the server's HTML does not hold the stored reply");
      check(!html.includes('data-testid="agent-chat"'), "the live chat was rendered on the server");

      await withPage(openBrowser, pageUrl, async (page, frames) => {
        const reads: string[] = [];
        page.on("request", (request) => {
          if (request.url().includes("/get-messages")) reads.push(request.url());
        });
        await page.getByTestId("agent-chat").waitFor({ timeout: TIMEOUT });
        await expect(page.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
        await until(() => (frames.sent.some((frame) => frame.type === "cf_agent_stream_resume_request") ? true : undefined), TIMEOUT, "the resume probe");
        const shown = (await assistantTexts(page)).at(-1) ?? "";
        check(plain(shown).includes(plain(reply)), `the live chat does not show the server-rendered reply: "${shown}"`);
        check(reads.length === 0, `the client read the transcript again on its first open: ${reads.join(", ")}`);
      });
    });

    await phase("replies render as Markdown, safely; the reply's first line and the composer stay in view", async () => {
      const mdUrl = `${server.origin}/?c=${conversation}-md`;
      for (const viewport of [
        { width: 1280, height: 720 },
        { width: 390, height: 664 }
      ]) {
        await withPage(openBrowser, mdUrl, async (page, frames) => {
          await page.setViewportSize(viewport);
          await expect(page.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
          await askAndStream(page, frames, "/markdown");
          await expect(messagesList(page)).toHaveAttribute("data-status", "ready", { timeout: TIMEOUT });
          const reply = page.locator(ASSISTANT).last();
          await expect(reply.locator("strong").first()).toHaveText("Markdown");
          await expect(reply.locator("ul > li")).toHaveCount(3);
          await expect(reply.locator("code", { hasText: "inline code" })).toBeVisible();
          await expect(reply.locator("pre")).toContainText('useAgentChat({ agent: "ChatAgent" })');
          check(!(await reply.innerText()).includes("**"), `the reply shows raw Markdown: ${await reply.innerText()}`);
          const placement = () =>
            page.evaluate((selector) => {
              const scroller = document.querySelector('[data-testid="chat-scroller"]')?.getBoundingClientRect();
              const composer = document.querySelector('[data-testid="chat-input"]')?.getBoundingClientRect();
              const reply = [...document.querySelectorAll(selector)].at(-1);
              const firstLine = reply?.querySelector('[data-slot="content"] p')?.getBoundingClientRect();
              if (!scroller || !composer || !firstLine) return "the scroll box, the composer or the reply's first line is missing";
              if (composer.top < 0 || composer.bottom > window.innerHeight + 0.5)
                return `the composer (${composer.top.toFixed(0)}–${composer.bottom.toFixed(0)} px) is outside the window (0–${window.innerHeight} px)`;
              const top = Math.max(scroller.top, 0);
              if (firstLine.top < top - 0.5 || firstLine.bottom > composer.top + 0.5)
                return `the reply's first line (${firstLine.top.toFixed(0)}–${firstLine.bottom.toFixed(0)} px) is outside the visible messages (${top.toFixed(0)}–${composer.top.toFixed(0)} px)`;
              return "";
            }, ASSISTANT);
          // UChatMessages scrolls smoothly: wait for the placement to hold, then name what is wrong if it never does.
          const placed = await until(async () => ((await placement()) === "" ? true : undefined), 5_000, "the reply and the composer to be in view").catch(
            () => false
          );
          check(placed, `${viewport.width}×${viewport.height}: ${await placement()}`);
          const covered = await copyButtonOverlap(page);
          check(covered === "", `${viewport.width}×${viewport.height}: ${covered}`);
          await page.screenshot({ path: join(OUT, `markdown-${viewport.width}.png`) });
        });
      }

      await withPage(openBrowser, mdUrl, async (page, frames) => {
        await expect(page.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
        // The demo agent quotes the question in its reply, so this puts HTML and component syntax into a reply.
        await askAndStream(page, frames, '<img src=x onerror="window.pwned=1"> ::script');
        const reply = page.locator(ASSISTANT).last();
        await expect(reply).toContainText('<img src=x onerror="window.pwned=1">');
        await expect(reply.locator("img, script, iframe")).toHaveCount(0);
        check((await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)) === undefined, "HTML in a reply ran a script");
      });

      const html = await (await fetch(mdUrl)).text();
      // The rendered messages, without Nuxt's payload (a <script> that holds the raw text) and without the comments
      // Vue's SSR marks fragments with (`<strong><!--[-->Markdown<!--]--></strong>`).
      const stored = html
        .slice(html.indexOf('data-testid="stored-messages"'))
        .replace(/<script\b[\s\S]*?<\/script>/gi, "")
        .replace(/<!--[\s\S]*?-->/g, "");
      check(/<strong[^>]*>Markdown<\/strong>/.test(stored), "the server's HTML does not render **Markdown** as <strong>");
      check((stored.match(/<li\b/g) ?? []).length >= 6, "the server's HTML does not render the reply's lists as <li>");
      check(/<pre\b[\s\S]*useAgentChat/.test(stored), "the server's HTML does not render the code block as <pre>");
      check(!stored.includes("**Markdown**"), "the server's HTML shows raw Markdown");
      check(stored.includes("&lt;img src=x"), "the server's HTML does not show the quoted HTML as text");
      check(!/<img[^>]*onerror/i.test(stored), "the server's HTML holds an <img> from a reply");
    });

    await phase("Stop stops this tab's reply", async () => {
      await withPage(openBrowser, pageUrl, async (page, frames) => {
        await expect(page.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
        const input = page.getByTestId("chat-input");
        await input.fill("/story");
        await input.press("Enter");
        await expect(messagesList(page)).toHaveAttribute("data-status", "streaming", { timeout: TIMEOUT });
        await until(async () => ((await assistantTexts(page)).at(-1)?.includes("Durable Object") ? true : undefined), TIMEOUT, "the story to stream");
        await submitButton(page).click();
        await expect(messagesList(page)).toHaveAttribute("data-status", "ready", { timeout: TIMEOUT });
        check(
          frames.sent.some((frame) => frame.type === "cf_agent_chat_request_cancel"),
          "Stop sent no cf_agent_chat_request_cancel to the agent"
        );
        // The stopped reply ends as the agent stored it: the words it streamed before it took the
        // cancel are read back, so wait for the screen to match the store before timing anything.
        const atStop = await until(
          async () => {
            const shown = (await assistantTexts(page)).at(-1) ?? "";
            return plain(shown) === (await storedReply()) ? shown : undefined;
          },
          TIMEOUT,
          "the stopped reply to match what the agent stored"
        );
        await page.waitForTimeout(1_000); // the story streams a word every ~80 ms: a second would add a dozen
        const later = (await assistantTexts(page)).at(-1) ?? "";
        check(later === atStop, `the reply kept growing after Stop:\n  at stop: ${atStop.length} chars\n  a second later: ${later.length} chars`);
        check(!later.includes("The end."), "the story ran to its end despite Stop");
        await expect(submitButton(page)).toHaveAttribute("type", "submit");
      });
    });

    await phase("a turn sent from a second tab shows as streaming in the first", async () => {
      await withPage(openBrowser, pageUrl, async (first) => {
        await expect(first.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
        await expect(messagesList(first)).toHaveAttribute("data-status", "ready");
        await withPage(openBrowser, pageUrl, async (second, secondFrames) => {
          await expect(second.getByText("Connection: open")).toBeVisible({ timeout: TIMEOUT });
          const input = second.getByTestId("chat-input");
          await input.fill("/story");
          await input.press("Enter");
          // The first tab has no request of its own, and still shows the turn as streaming, with a stop button.
          await expect(messagesList(first)).toHaveAttribute("data-status", "streaming", { timeout: TIMEOUT });
          await expect(submitButton(first)).not.toHaveAttribute("type", "submit");
          await first.screenshot({ path: join(OUT, "watching-tab.png") });
          await until(
            () => (secondFrames.received.some((frame) => frame.type === "cf_agent_use_chat_response" && frame.done) ? true : undefined),
            60_000,
            "the second tab's story to finish"
          );
        });
        await expect(messagesList(first)).toHaveAttribute("data-status", "ready", { timeout: TIMEOUT });
        await expect(first.locator(ASSISTANT).last()).toContainText("The end.", {
          timeout: TIMEOUT
        });
      });
    });
    const started = worker;
    await phase("the agent's wrangler dev printed no network failure (offline: no Request.cf download)", async () => {
      const printed = started.recentOutput();
      check(!/Request\.cf|workers\.cloudflare\.com|ENOTFOUND|EAI_AGAIN/.test(printed), `wrangler dev printed a network failure:\n${printed}`);
    });
  } finally {
    await browser?.close();
    nitro?.stop();
    await worker?.stop();
  }

  const total = (Date.now() - started) / 1000;
  console.log(`\nexample:nuxt passed in ${total.toFixed(1)} s (${summary()})`);
}

main().catch((error: unknown) => {
  console.error(`\nexample:nuxt failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
