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
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { freePort, startWorker, type WorkerServer } from "../test/support/wrangler.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const APP = join(ROOT, "examples", "nuxt");
const WORKER_CONFIG = join(ROOT, "examples", "chat", "worker", "wrangler.jsonc");
const OUT = join(ROOT, "artifacts", "nuxt");
const HOST = "127.0.0.1";
const quietEnv = { ...process.env, NUXT_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" };

const timings: Array<[string, number]> = [];
async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  console.log(`• ${name}`);
  const result = await run();
  const seconds = (Date.now() - started) / 1000;
  timings.push([name, seconds]);
  console.log(`  ok (${seconds.toFixed(1)} s)`);
  return result;
}

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: quietEnv, stdio: "inherit" });
    child.once("error", fail);
    child.once("exit", (code, signal) =>
      code === 0 ? done() : fail(new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`})`))
    );
  });
}

function installIsCurrent(): boolean {
  const marker = join(APP, "node_modules", ".package-lock.json");
  return existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(APP, "package-lock.json")).mtimeMs;
}

/** Starts the built Nitro server; resolves once `/` answers. */
async function startNitro(agentHost: string): Promise<{ origin: string; child: ChildProcess; output: () => string }> {
  const port = await freePort();
  let output = "";
  const child = spawn(process.execPath, [join(APP, ".output", "server", "index.mjs")], {
    cwd: APP,
    env: { ...quietEnv, HOST, PORT: String(port), NUXT_PUBLIC_AGENT_HOST: agentHost },
    stdio: ["ignore", "pipe", "pipe"]
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const origin = `http://${HOST}:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Nitro server exited (${child.exitCode}):\n${output}`);
    try {
      await fetch(origin, { signal: AbortSignal.timeout(2_000) }).then((response) => response.arrayBuffer());
      return { origin, child, output: () => output };
    } catch {
      if (Date.now() > deadline) throw new Error(`the Nitro server did not answer within 20 s:\n${output}`);
      await new Promise((wait) => setTimeout(wait, 150));
    }
  }
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

async function main(): Promise<void> {
  const started = Date.now();
  mkdirSync(OUT, { recursive: true });

  if (process.argv.includes("--skip-install") || installIsCurrent()) {
    console.log("• install: examples/nuxt/node_modules is up to date, skipped");
  } else {
    await phase("install (npm ci in examples/nuxt)", () =>
      run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], APP)
    );
  }

  await phase("build (nuxt build)", () => run(process.execPath, [realpathSync(join(APP, "node_modules", ".bin", "nuxt")), "build"], APP));

  let worker: WorkerServer | undefined;
  let nitro: Awaited<ReturnType<typeof startNitro>> | undefined;
  try {
    worker = await phase("start the chat demo's agent (wrangler dev)", () => startWorker({ configPath: WORKER_CONFIG }));
    const agentHost = worker.host;
    nitro = await phase("start the built server (node .output/server/index.mjs)", () => startNitro(agentHost));
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
    nitro?.child.kill("SIGTERM");
    await worker?.stop();
  }

  const total = (Date.now() - started) / 1000;
  console.log(`\nexample:nuxt passed in ${total.toFixed(1)} s (${timings.map(([name, s]) => `${name.split(" (")[0]} ${s.toFixed(1)} s`).join(", ")})`);
}

main().catch((error: unknown) => {
  console.error(`\nexample:nuxt failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
