/**
 * The full chaos suite (`npm run test:chaos`, driven by scripts/chaos.ts):
 * the same chaos files `npm test` runs, at full size (CHAOS_FULL=1).
 */
import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vitest/config";
import { browserProject as browser } from "./test/support/browser-project.ts";

export default defineConfig({
  test: {
    // One file at a time: the machine is shared, and the figures are per scenario anyway.
    fileParallelism: false,
    projects: [
      {
        plugins: [vue()],
        test: { name: "chaos-frames", include: ["test/browser/chaos-frames.test.ts"], testTimeout: 1_800_000, browser: browser() }
      },
      {
        plugins: [vue()],
        test: {
          name: "chaos-e2e",
          include: ["test/e2e/chaos.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 1_800_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          browser: browser()
        }
      }
    ]
  }
});
