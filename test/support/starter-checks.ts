/**
 * What a user of examples/starter (what `npm run new-app` copies) meets, checked
 * in Chromium against its running `vite dev` (`npm run test:consumer`), at a
 * desktop's 1280×800 and a phone's 390×844:
 *
 * - the log follows new replies (its end and the reply's last line in view), and a
 *   reloaded conversation opens at its end;
 * - no empty-state text shows while a conversation's history loads (it does show
 *   for a new conversation, once its empty history is in);
 * - with the system in dark mode, the replies' inline code chips are dark too;
 * - an agent the Worker does not have (a typo in the class name) shows
 *   `connectionError` in plain words, and the message sent meanwhile as not sent.
 *
 * Plain Node 22.
 */
import type { Browser, Page } from "playwright";
import { askAndStream, until, withPage } from "./pages.ts";
import { check } from "./steps.ts";

export const STARTER_VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 }
] as const;

type Viewport = (typeof STARTER_VIEWPORTS)[number];

/** Records on the page whether the empty-state text was ever in the document, from its first byte. */
async function recordEmptyState(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen = window as unknown as { emptyStateShown: boolean };
    seen.emptyStateShown = false;
    new MutationObserver(() => {
      if (document.querySelector(".chat__empty")) seen.emptyStateShown = true;
    }).observe(document, { childList: true, subtree: true });
  });
}

const emptyStateShown = (page: Page) => page.evaluate(() => (window as unknown as { emptyStateShown: boolean }).emptyStateShown);

/** "" when the log is scrolled to its end with the last message's bottom in view, else what is wrong. */
function placement(page: Page): Promise<string> {
  return page.evaluate(() => {
    const log = document.querySelector<HTMLElement>(".chat__log");
    const last = [...document.querySelectorAll(".chat__message")].at(-1);
    if (!log || !last) return "the log or its last message is missing";
    const below = log.scrollHeight - log.scrollTop - log.clientHeight;
    const lastBottom = last.getBoundingClientRect().bottom;
    const logBottom = log.getBoundingClientRect().bottom;
    if (below > 2) return `the log is ${below.toFixed(0)} px above its end (scrollTop ${log.scrollTop}, height ${log.scrollHeight})`;
    if (lastBottom > logBottom + 1) return `the last message ends at ${lastBottom.toFixed(0)} px, below the log's bottom (${logBottom.toFixed(0)} px)`;
    return "";
  });
}

async function expectAtEnd(page: Page, viewport: Viewport, when: string): Promise<void> {
  const placed = await until(async () => ((await placement(page)) === "" ? true : undefined), 5_000, "the log to reach its end").catch(() => false);
  check(placed, `${viewport.width}×${viewport.height}, ${when}: ${await placement(page)}`);
}

const overflows = (page: Page) => page.evaluate(() => {
  const log = document.querySelector<HTMLElement>(".chat__log");
  return !!log && log.scrollHeight > log.clientHeight + 100;
});

/** Relative luminance (0 black … 1 white) of a computed CSS colour; a transparent one counts as the dark page behind it. */
function luminance(color: string): number {
  // rgb(a) in 0–255, or color(srgb …) in 0–1.
  const scale = color.startsWith("color(srgb") ? 255 : 1;
  const [r = 0, g = 0, b = 0, a = 1] = (color.match(/[\d.]+/g) ?? []).map((value, index) => (index < 3 ? Number(value) * scale : Number(value)));
  if (!/^(rgba?\(|color\(srgb )/.test(color)) throw new Error(`cannot read the colour ${color}`);
  if (a === 0) return 0;
  const [lr = 0, lg = 0, lb = 0] = [r, g, b].map((value) => (value / 255 <= 0.04045 ? value / 255 / 12.92 : ((value / 255 + 0.055) / 1.055) ** 2.4));
  return 0.2126 * lr + 0.7152 * lg + 0.0722 * lb;
}

/** The inline code chips of the replies: the luminance of their background and of their text. */
async function chipLuminance(page: Page): Promise<Array<{ chip: number; text: number }>> {
  const colors = await page.evaluate(() =>
    [...document.querySelectorAll("article[data-role='assistant'] code")]
      .filter((code) => !code.closest("pre"))
      .map((code) => ({ background: getComputedStyle(code).backgroundColor, color: getComputedStyle(code).color }))
  );
  return colors.map(({ background, color }) => ({ chip: luminance(background), text: luminance(color) }));
}

/** A conversation of several replies (dark mode), then the same conversation reloaded. */
export async function checkStarterConversation(browser: Browser, origin: string, viewport: Viewport): Promise<void> {
  const size = `${viewport.width}×${viewport.height}`;
  const url = `${origin}/#starter-${viewport.width}-${Date.now().toString(36)}`;
  const options = { viewport, colorScheme: "dark" as const, before: recordEmptyState };
  await withPage(
    browser,
    url,
    async (page, frames) => {
      // A new conversation: once its (empty) history is in, the empty state shows.
      await page.locator(".chat__empty").waitFor({ timeout: 20_000 });
      for (let turn = 1; turn <= 6 && (turn <= 2 || !(await overflows(page))); turn++) {
        await askAndStream(page, frames, `Question ${turn} at ${size}`);
        await expectAtEnd(page, viewport, `after reply ${turn}`);
      }
      check(await overflows(page), `${size}: six replies did not fill the log; the scroll check proves nothing`);
      const chips = await chipLuminance(page);
      check(chips.length > 0, `${size}: the replies hold no inline code chip to check (the scripted model's reply has \`npm run dev\`)`);
      const light = chips.filter((chip) => chip.chip > 0.25 || chip.text < chip.chip);
      check(light.length === 0, `${size}, dark mode: ${light.length} of ${chips.length} inline code chips are light: ${JSON.stringify(light)}`);
    },
    options
  );
  // Reloaded: the history loads with no empty-state flash, and the log opens at its end.
  await withPage(
    browser,
    url,
    async (page) => {
      await until(async () => ((await page.locator("article[data-role='assistant']").count()) >= 2 ? true : undefined), 20_000, "the history to show");
      await expectAtEnd(page, viewport, "after a reload");
      check(!(await emptyStateShown(page)), `${size}: the empty-state text showed while the history loaded`);
    },
    options
  );
}

/** The class name in App.vue as `vite dev` serves it to `page`, with a typo a user might make. */
async function mistypeAgent(page: Page): Promise<void> {
  await page.route(/\/src\/App\.vue(\?[^/]*)?$/, async (route) => {
    const response = await route.fetch();
    const source = await response.text();
    check(source.includes('agent: "ChatAgent"'), "the starter's App.vue no longer names ChatAgent as written; update checkStarterWrongAgent");
    await route.fulfill({ response, body: source.replace('agent: "ChatAgent"', 'agent: "ChatAgnet"') });
  });
}

/** The agent's class name mistyped in App.vue (in what `vite dev` serves): the page says so in plain words. */
export async function checkStarterWrongAgent(browser: Browser, origin: string, viewport: Viewport): Promise<void> {
  const size = `${viewport.width}×${viewport.height}`;
  await withPage(
    browser,
    `${origin}/#starter-typo-${viewport.width}`,
    async (page) => {
      await page.getByTestId("chat-input").fill("Is anyone there?");
      await page.getByTestId("chat-input").press("Enter");
      const problem = page.getByTestId("connection-error");
      await problem.getByText(/HTTP 400/).waitFor({ timeout: 30_000 });
      const text = (await problem.innerText()).replace(/\s+/g, " ");
      check(text.includes("Can't reach the agent"), `${size}: the connection problem is not said in plain words: "${text}"`);
      check(text.includes("ChatAgnet"), `${size}: the connection problem does not name the agent: "${text}"`);
      check(await problem.isVisible(), `${size}: the connection problem is not visible`);
      const waiting = page.locator("article[data-role='user'][data-waiting]");
      check((await waiting.count()) === 1, `${size}: the message sent meanwhile is not shown as waiting`);
      check((await waiting.innerText()).includes("Not sent yet"), `${size}: the waiting message does not say it is not sent`);
      check(!(await page.locator(".chat__empty").isVisible()), `${size}: the empty state shows although the history never loaded`);
    },
    {
      viewport,
      before: mistypeAgent,
      // The browser's own report of each refused socket and of the probe, and the library's one warning naming it.
      expected: /WebSocket connection to .* failed|status of 400|Could not connect to agent ChatAgnet/
    }
  );
}
