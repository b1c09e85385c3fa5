import { fileURLToPath } from "node:url";
import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vitest/config";
import { browserProject as browser } from "./test/support/browser-project.ts";

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" }
      },
      {
        test: { name: "server", include: ["test/server/**/*.test.ts"], environment: "node" }
      },
      {
        test: {
          name: "types",
          include: [],
          typecheck: {
            enabled: true,
            only: true,
            include: ["test/types/**/*.test-d.ts"],
            tsconfig: "test/tsconfig.json"
          }
        }
      },
      {
        plugins: [vue()],
        // The documented examples (test/fixtures/docs) import the package by its name.
        resolve: { alias: [{ find: /^agents-vue$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }] },
        test: { name: "browser", include: ["test/browser/**/*.test.ts"], browser: browser() }
      },
      {
        plugins: [vue()],
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // One wrangler dev for the run; files share it, each test uses its own conversation.
          fileParallelism: false,
          browser: browser()
        }
      }
    ]
  }
});
