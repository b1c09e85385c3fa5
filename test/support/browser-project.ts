/**
 * The browser settings every browser-mode project shares (vitest.config.ts,
 * vitest.chaos.config.ts).
 */
import { playwright } from "@vitest/browser-playwright";
import { chromiumArgs, chromiumPath } from "./browser.ts";
import { chaosCommands } from "./chaos-commands.ts";
import { thinkCommands } from "./think-commands.ts";

/** A fresh object per project: vitest names each project's instances in place. */
export const browserProject = () => ({
  enabled: true,
  headless: true,
  screenshotFailures: false,
  provider: playwright({
    launchOptions: { executablePath: chromiumPath(), args: chromiumArgs }
  }),
  instances: [{ browser: "chromium" as const }],
  // The chaos suite's seed, figures and restartable server (chaos-commands.ts);
  // the Think fixture worker, started by the tests that need it (think-commands.ts).
  commands: { ...chaosCommands, ...thinkCommands }
});
