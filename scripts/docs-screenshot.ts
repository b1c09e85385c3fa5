/**
 * `node scripts/docs-screenshot.ts`: the README's screenshot of the demo,
 * taken in headless Chromium from `npm run demo` (startDemo) after a short
 * conversation, saved as docs/public/demo.png. Run it again when the demo's
 * look changes; the PNG is committed.
 */
import { mkdtemp } from "node:fs/promises";
import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Page, chromium, expect } from "playwright/test";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { startDemo } from "./demo.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "docs", "public", "demo.png");
const TIMEOUT = 30_000;

const composer = (page: Page) => page.getByRole("textbox", { name: "Message" });
const idle = (page: Page) => expect(page.getByRole("log", { name: "Messages" })).toHaveAttribute("aria-busy", "false", { timeout: TIMEOUT });

async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text);
  await composer(page).press("Enter");
  await idle(page);
}

const demo = await startDemo({ port: 0, persistTo: await mkdtemp(join(tmpdir(), "agents-vue-shot-")), logLevel: "warn", watch: false });
const browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, timeout: 60_000 });
try {
  const page = await browser.newPage({ viewport: { width: 1040, height: 640 }, deviceScaleFactor: 1, colorScheme: "light" });
  await page.goto(`${demo.url}#/c/welcome`, { timeout: 90_000 });
  await expect(page.locator(".status[data-status='open']")).toBeVisible({ timeout: TIMEOUT });
  await send(page, "What can you do?");
  await send(page, "/time");
  await send(page, "/approve");
  await expect(page.locator(".tool-card[data-tool='deleteItem']").last()).toHaveAttribute("data-state", "waiting-approval", { timeout: TIMEOUT });
  await page.screenshot({ path: OUT });
  console.log(`${OUT.slice(ROOT.length + 1)}: ${(statSync(OUT).size / 1024).toFixed(0)} kB`);
} finally {
  await browser.close();
  await demo.stop();
}
