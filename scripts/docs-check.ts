/**
 * `npm run docs:check`: builds the documentation site (docs/, VitePress) and
 * checks what a reader gets:
 *
 * 1. every internal link of every built page resolves to a page or file of
 *    the site, and its `#anchor` to an element of that page;
 * 2. in headless Chromium, with every request that is not for the site's own
 *    files blocked (other origins, WebSockets, anything the site does not
 *    serve), the playground connects to its in-page agent, streams a reply,
 *    survives "Drop the connection" in the middle of it and completes it,
 *    shows a second tab's turn, and runs a client tool and an approval;
 * 3. axe-core finds no WCAG 2 A/AA violation on the home page, a guide and the
 *    playground (after a conversation), in the light and the dark theme.
 *
 * `--no-build` checks the site already in docs/.vitepress/dist.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type Page, chromium, expect } from "playwright/test";
import { build } from "vitepress";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { AXE_TAGS, axeViolations } from "./demo-axe.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DOCS = join(ROOT, "docs");
const DIST = join(DOCS, ".vitepress", "dist");
const TIMEOUT = 20_000;
/** What the playground's agent streams for "Tell me a long story" (docs/.vitepress/theme/playground/script.ts). */
const { STORY } = (await import("../docs/.vitepress/theme/playground/script.ts")) as { STORY: string };

const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

async function step(name: string, run: () => Promise<void>): Promise<void> {
  process.stdout.write(`  • ${name}\n`);
  const at = Date.now();
  await run();
  console.log(`    ok (${((Date.now() - at) / 1000).toFixed(1)} s)`);
}

// ── 1. Links ──

function htmlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return htmlFiles(path);
    return path.endsWith(".html") ? [path] : [];
  });
}

/** The file a site path is served from, as the static server below (and any static host) serves it. */
export function fileFor(dist: string, pathname: string): string | undefined {
  const clean = decodeURIComponent(pathname);
  const candidates = clean.endsWith("/") ? [join(dist, clean, "index.html")] : [join(dist, clean), join(dist, `${clean}.html`), join(dist, clean, "index.html")];
  return candidates.find((candidate) => candidate.startsWith(dist) && existsSync(candidate) && statSync(candidate).isFile());
}

const ids = new Map<string, Set<string>>();
function idsOf(file: string): Set<string> {
  let found = ids.get(file);
  if (!found) {
    found = new Set([...readFileSync(file, "utf8").matchAll(/\sid="([^"]+)"/g)].map((match) => decodeEntities(match[1]!)));
    ids.set(file, found);
  }
  return found;
}

const decodeEntities = (text: string) =>
  text.replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">");

/** Every broken internal link of the built site: `page → href (why)`. */
export function brokenLinks(dist: string): { checked: number; broken: string[] } {
  const broken: string[] = [];
  let checked = 0;
  for (const page of htmlFiles(dist)) {
    const html = readFileSync(page, "utf8");
    const pagePath = `/${relative(dist, page).replace(/\\/g, "/")}`;
    for (const match of html.matchAll(/<a\s[^>]*?href="([^"]*)"/g)) {
      const href = decodeEntities(match[1]!);
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) continue;
      checked++;
      const url = new URL(href, `http://site${pagePath}`);
      const target = url.pathname === pagePath && href.startsWith("#") ? page : fileFor(dist, url.pathname);
      if (!target) {
        broken.push(`${pagePath} → ${href} (no such page)`);
        continue;
      }
      const anchor = decodeURIComponent(url.hash.slice(1));
      if (anchor && target.endsWith(".html") && !idsOf(target).has(anchor)) broken.push(`${pagePath} → ${href} (no #${anchor} on that page)`);
    }
  }
  return { checked, broken };
}

/**
 * The README's links: into the site (`./docs/<page>.md#anchor`, checked
 * against the built page and its ids) or to files of the repository.
 */
export function brokenReadmeLinks(root: string, dist: string): { checked: number; broken: string[] } {
  const broken: string[] = [];
  let checked = 0;
  const readme = readFileSync(join(root, "README.md"), "utf8").replace(/^```[\s\S]*?^```$/gm, "");
  for (const match of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
    const href = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    checked++;
    const [path = "", anchor] = href.split("#");
    if (!existsSync(join(root, path))) {
      broken.push(`README.md → ${href} (no such file)`);
      continue;
    }
    const page = /^\.?\/?docs\/(.+)\.md$/.exec(path)?.[1];
    if (!page) continue;
    const built = fileFor(dist, `/${page}.html`);
    if (!built) broken.push(`README.md → ${href} (the site has no page for it)`);
    else if (anchor && !idsOf(built).has(decodeURIComponent(anchor))) broken.push(`README.md → ${href} (no #${anchor} on that page)`);
  }
  return { checked, broken };
}

// ── The site, served from disk ──

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".ico": "image/x-icon",
  ".txt": "text/plain"
};

function serve(dist: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const file = fileFor(dist, new URL(request.url ?? "/", "http://site").pathname);
    if (!file) {
      response.writeHead(404).end("Not found");
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  return new Promise((done) => server.listen(0, "127.0.0.1", () => done({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

// ── 2. and 3. In Chromium ──

interface Watched {
  blocked: string[];
  problems: string[];
}

/** A page whose every request outside the site is blocked (and recorded), and whose errors are recorded. */
async function openPage(browser: Browser, origin: string, scheme: "light" | "dark"): Promise<{ page: Page; watched: Watched }> {
  const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
  const watched: Watched = { blocked: [], problems: [] };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    watched.blocked.push(url);
    return route.abort("blockedbyclient");
  });
  await context.routeWebSocket(/.*/, (socket) => {
    watched.blocked.push(socket.url());
    void socket.close({ code: 1008, reason: "blocked by docs:check" });
  });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => watched.problems.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") watched.problems.push(`console.error: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) watched.problems.push(`${response.status()} for ${response.url()}`);
  });
  return { page, watched };
}

async function assertAccessible(page: Page, what: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations.length > 0) throw new Error(`axe found ${violations.length} violation(s) (${AXE_TAGS.join(", ")}) on ${what}:\n    ${violations.join("\n    ")}`);
  console.log(`    axe: 0 violations on ${what}`);
}

function assertClean(watched: Watched, what: string): void {
  if (watched.problems.length > 0) throw new Error(`${what}:\n    ${watched.problems.join("\n    ")}`);
}

/** The text of the last message of a role in the playground. */
const lastText = (page: Page, role: "user" | "assistant") =>
  page.getByTestId(`message-${role}`).last().locator(".text").allInnerTexts().then((parts) => parts.join(""));

async function playground(browser: Browser, origin: string, scheme: "light" | "dark"): Promise<void> {
  const { page, watched } = await openPage(browser, origin, scheme);
  await page.goto(`${origin}/playground.html`);
  await expect(page.getByTestId("connection")).toHaveText("Connected");
  const input = page.getByTestId("input");

  // A streamed reply, the connection dropped in the middle, the reply completed after the reconnect.
  await input.fill("Tell me a long story");
  await page.getByTestId("send").click();
  await expect(page.getByTestId("status")).toHaveText("streaming");
  await expect.poll(() => lastText(page, "assistant").then((text) => text.split(" ").length), { timeout: TIMEOUT }).toBeGreaterThan(8);
  const before = await lastText(page, "assistant");
  expect(before.length, "the reply was still streaming when the connection dropped").toBeLessThan(STORY.length);
  await page.getByTestId("drop").click();
  await expect(page.getByTestId("connection")).toContainText("Offline");
  await expect(page.getByTestId("connection")).toHaveText("Connected");
  await expect.poll(() => lastText(page, "assistant"), { timeout: 60_000 }).toBe(STORY);
  await expect(page.getByTestId("status")).toHaveText("ready");
  await expect(page.getByTestId("message-assistant")).toHaveCount(1);

  // Another tab's turn streams in here.
  await page.getByTestId("second-tab").click();
  await expect(page.getByTestId("message-user").last()).toContainText("Hello from the other tab");
  await expect.poll(() => lastText(page, "assistant"), { timeout: TIMEOUT }).toContain("Hello, other tab!");
  await expect(page.getByTestId("status")).toHaveText("ready");

  // A client tool the browser runs, and a server tool that waits for approval.
  await page.getByRole("button", { name: "What time is it?" }).click();
  await expect.poll(() => lastText(page, "assistant"), { timeout: TIMEOUT }).toContain("Your browser says it is");
  await page.getByRole("button", { name: "Delete notes.txt" }).click();
  await page.getByTestId("approve").click();
  await expect.poll(() => lastText(page, "assistant"), { timeout: TIMEOUT }).toContain("notes.txt is gone");
  await expect(page.getByTestId("status")).toHaveText("ready");

  await assertAccessible(page, `the playground after a conversation (${scheme})`);
  assertClean(watched, `the playground (${scheme}) reported problems`);
  const html = await page.evaluate(() => document.documentElement.className);
  expect(html.includes("dark"), `the page is in the ${scheme} theme`).toBe(scheme === "dark");
  console.log(`    blocked ${watched.blocked.length} request(s) outside the site${watched.blocked.length ? `: ${[...new Set(watched.blocked)].join(", ")}` : ""}`);
  await page.context().close();
}

async function pages(browser: Browser, origin: string, scheme: "light" | "dark"): Promise<void> {
  for (const path of ["/", "/guide/streaming.html"]) {
    const { page, watched } = await openPage(browser, origin, scheme);
    await page.goto(`${origin}${path}`);
    await page.waitForLoadState("networkidle");
    await assertAccessible(page, `${path} (${scheme})`);
    assertClean(watched, `${path} (${scheme}) reported problems`);
    await page.context().close();
  }
}

async function main(): Promise<void> {
  console.log("docs:check");
  if (!process.argv.includes("--no-build")) {
    await step("build the site (vitepress build docs)", () => build(DOCS));
  }
  await step("every internal link resolves", async () => {
    const { checked, broken } = brokenLinks(DIST);
    if (broken.length > 0) throw new Error(`${broken.length} broken link(s):\n    ${broken.join("\n    ")}`);
    console.log(`    ${checked} internal links on ${htmlFiles(DIST).length} pages`);
  });
  await step("every link of the README resolves (into the site, or to a file)", async () => {
    const { checked, broken } = brokenReadmeLinks(ROOT, DIST);
    if (broken.length > 0) throw new Error(`${broken.length} broken link(s):\n    ${broken.join("\n    ")}`);
    console.log(`    ${checked} links`);
  });
  const { origin, server } = await serve(DIST);
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, timeout: 60_000 });
  try {
    for (const scheme of ["light", "dark"] as const) {
      await step(`the playground streams, survives a dropped connection, shows a second tab (${scheme})`, () => playground(browser, origin, scheme));
      await step(`axe on the home page and a guide (${scheme})`, () => pages(browser, origin, scheme));
    }
  } finally {
    await browser.close();
    server.close();
  }
  console.log(`docs:check passed in ${seconds()}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`docs:check failed after ${seconds()}:`, error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
