/**
 * Makes sure the browser test tiers have a Chromium to launch: `CHROMIUM_PATH`,
 * a system Chromium, or Playwright's own browser. On a Debian machine run as
 * root it installs Debian's Chromium (Playwright cannot download its browser
 * behind a closed network); elsewhere it says how to get one and exits 1.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromiumPath } from "../test/support/browser.ts";

function playwrightHasBrowser(): boolean {
  try {
    const output = execFileSync(process.execPath, ["-e", "import('playwright').then(p=>console.log(p.chromium.executablePath()))"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    }).trim();
    return output.length > 0 && existsSync(output);
  } catch {
    return false;
  }
}

if (chromiumPath() || playwrightHasBrowser()) process.exit(0);

const canApt = existsSync("/usr/bin/apt-get") && typeof process.getuid === "function" && process.getuid() === 0;
if (canApt) {
  console.log("[ensure-browser] No Chromium found; installing Debian's chromium with apt-get (one time)...");
  try {
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], { stdio: "inherit" });
  } catch {
    execFileSync("apt-get", ["update"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], { stdio: "inherit" });
  }
  if (chromiumPath()) process.exit(0);
}
console.error(
  "[ensure-browser] The browser tests need Chromium. Install one (Debian: `apt-get install chromium`), " +
    "or `npx playwright install chromium`, or point CHROMIUM_PATH at a Chromium or Chrome binary."
);
process.exit(1);
