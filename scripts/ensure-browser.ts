/**
 * Makes sure the browser test tiers have a Chromium to launch: `CHROMIUM_PATH`,
 * a system Chromium, or Playwright's own browser. On a Debian machine run as
 * root it installs Debian's Chromium (Playwright cannot download its browser
 * behind a closed network); elsewhere it says how to get one and exits 1.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromiumPath } from "../test/support/browser.ts";
import { STARTUP_TIMEOUTS, StartupTimeoutError } from "../test/support/startup.ts";

/** Whether `execFileSync` gave up because its `timeout` passed. */
const timedOut = (error: unknown) => (error as { code?: unknown }).code === "ETIMEDOUT";

/** Runs a command that may not hang: past `timeoutMs` it is killed and the script exits 1 naming the step. */
function runBounded(step: string, command: string, args: string[], timeoutMs: number): void {
  try {
    execFileSync(command, args, { stdio: "inherit", timeout: timeoutMs, killSignal: "SIGKILL" });
  } catch (error) {
    if (!timedOut(error)) throw error;
    console.error(`[ensure-browser] ${new StartupTimeoutError(step, timeoutMs).message}`);
    process.exit(1);
  }
}

function playwrightHasBrowser(): boolean {
  try {
    const output = execFileSync(process.execPath, ["-e", "import('playwright').then(p=>console.log(p.chromium.executablePath()))"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: STARTUP_TIMEOUTS.browserProbeMs,
      killSignal: "SIGKILL"
    }).trim();
    return output.length > 0 && existsSync(output);
  } catch (error) {
    if (timedOut(error)) {
      console.warn(`[ensure-browser] ${new StartupTimeoutError("ask Playwright for its Chromium", STARTUP_TIMEOUTS.browserProbeMs).message}`);
    }
    return false;
  }
}

if (chromiumPath() || playwrightHasBrowser()) process.exit(0);

const canApt = existsSync("/usr/bin/apt-get") && typeof process.getuid === "function" && process.getuid() === 0;
if (canApt) {
  console.log("[ensure-browser] No Chromium found; installing Debian's chromium with apt-get (one time)...");
  const install = () =>
    runBounded("apt-get install chromium", "apt-get", ["install", "-y", "--no-install-recommends", "chromium"], STARTUP_TIMEOUTS.browserInstallMs);
  try {
    install();
  } catch {
    runBounded("apt-get update", "apt-get", ["update"], STARTUP_TIMEOUTS.browserInstallMs);
    install();
  }
  if (chromiumPath()) process.exit(0);
}
console.error(
  "[ensure-browser] The browser tests need Chromium. Install one (Debian: `apt-get install chromium`), " +
    "or `npx playwright install chromium`, or point CHROMIUM_PATH at a Chromium or Chrome binary."
);
process.exit(1);
