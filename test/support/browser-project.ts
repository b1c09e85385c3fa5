/**
 * The browser settings every browser-mode project shares (vitest.config.ts,
 * vitest.chaos.config.ts).
 */
import { playwright } from "@vitest/browser-playwright";
import { chromiumArgs, chromiumPath } from "./browser.ts";
import { chaosCommands } from "./chaos-commands.ts";
import { outageCommands } from "./outage-commands.ts";
import { STARTUP_TIMEOUTS } from "./startup.ts";
import { thinkCommands } from "./think-commands.ts";

/** A fresh object per project: vitest names each project's instances in place. */
export const browserProject = () => ({
  enabled: true,
  headless: true,
  screenshotFailures: false,
  // Bounded startup: Playwright's launch fails after browserLaunchMs ("browserType.launch: Timeout …"), and a page
  // that does not connect back fails the run after browserConnectMs ("Failed to connect to the browser session …").
  provider: playwright({
    launchOptions: { executablePath: chromiumPath(), args: chromiumArgs, timeout: STARTUP_TIMEOUTS.browserLaunchMs }
  }),
  connectTimeout: STARTUP_TIMEOUTS.browserConnectMs,
  instances: [{ browser: "chromium" as const }],
  // The chaos suite's seed, figures and restartable server (chaos-commands.ts);
  // the Think fixture worker, started by the tests that need it (think-commands.ts);
  // an agent a test takes down and brings back (outage-commands.ts).
  commands: { ...chaosCommands, ...thinkCommands, ...outageCommands }
});
