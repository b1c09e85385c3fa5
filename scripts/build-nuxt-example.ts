/**
 * `npm run example:nuxt`: proves the SSR story with a real Nuxt app.
 *
 * 1. installs examples/nuxt from its own lockfile (kept out of the root
 *    node_modules; skipped when its node_modules is up to date);
 * 2. `nuxt build`;
 * 3. starts the built Nitro server and fetches `/`: 200 HTML, rendered on the
 *    server with the <ClientOnly> fallback in place of the chat, no SSR error;
 * 4. starts the chat demo's agent (wrangler dev) and opens the page in headless
 *    Chromium: the chat mounts in the browser and a message gets a streamed
 *    reply, with no page error. Screenshot: artifacts/nuxt/page.png.
 *
 * Exits non-zero on any failure. `--skip-install` reuses examples/nuxt/node_modules as is.
 */
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { startNitro, type NitroServer } from "../test/support/nitro.ts";
import { check, createSteps, run } from "../test/support/steps.ts";
import { startWorker, type WorkerServer } from "../test/support/wrangler.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const APP = join(ROOT, "examples", "nuxt");
const WORKER_CONFIG = join(ROOT, "examples", "chat", "worker", "wrangler.jsonc");
const OUT = join(ROOT, "artifacts", "nuxt");
const quietEnv = { ...process.env, NUXT_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" };

const { step: phase, summary } = createSteps();

function installIsCurrent(): boolean {
  const marker = join(APP, "node_modules", ".package-lock.json");
  return existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(APP, "package-lock.json")).mtimeMs;
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
    run(process.execPath, [realpathSync(join(APP, "node_modules", ".bin", "nuxt")), "build"], { cwd: APP, env: quietEnv })
  );

  let worker: WorkerServer | undefined;
  let nitro: NitroServer | undefined;
  try {
    worker = await phase("start the chat demo's agent (wrangler dev)", () => startWorker({ configPath: WORKER_CONFIG }));
    const agentHost = worker.host;
    nitro = await phase("start the built server (node .output/server/index.mjs)", () =>
      startNitro(APP, { ...quietEnv, NUXT_PUBLIC_AGENT_HOST: agentHost })
    );
    const server = nitro;

    await phase("server render of / (SSR)", async () => {
      const response = await fetch(server.origin);
      const html = await response.text();
      check(response.status === 200, `GET / answered ${response.status}:\n${html.slice(0, 500)}`);
      check(response.headers.get("content-type")?.includes("text/html"), "GET / is not HTML");
      check(html.includes("<h1>agents-vue in Nuxt</h1>"), "the server did not render the page");
      check(html.includes('data-testid="chat-placeholder"'), "the <ClientOnly> fallback is missing from the server HTML");
      check(!html.includes('data-testid="agent-chat"'), "the chat was rendered on the server; it must be client-only");
      check(!/\[nuxt\]|\[request error\]|error/i.test(server.output()), `the server logged an error:\n${server.output()}`);
    });

    await phase("the chat mounts in the browser and streams a reply", async () => {
      const browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, headless: true });
      const errors: string[] = [];
      try {
        const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
        page.on("pageerror", (error) => errors.push(error.message));
        page.on("console", (message) => {
          if (message.type() === "error" || message.type() === "warning") errors.push(message.text());
        });
        await page.goto(server.origin);
        await page.getByTestId("agent-chat").waitFor({ timeout: 15_000 });
        check((await page.getByTestId("chat-placeholder").count()) === 0, "the fallback is still shown after mount");
        await page.getByText("Connection: open").waitFor({ timeout: 15_000 });
        await page.getByLabel("Message").fill("Does SSR work?");
        await page.getByLabel("Message").press("Enter");
        const reply = page.locator(".chat__message[data-role='assistant']").last();
        await reply.filter({ hasText: "Does SSR work?" }).waitFor({ timeout: 20_000 });
        await page.getByText("Connection: open · ready").waitFor({ timeout: 20_000 });
        await page.screenshot({ path: join(OUT, "page.png") });
      } finally {
        await browser.close();
      }
      check(errors.length === 0, `the page reported errors:\n${errors.join("\n")}`);
    });
  } finally {
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
