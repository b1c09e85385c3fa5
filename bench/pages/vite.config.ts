/**
 * Builds the three bench pages (A: agents-vue, B: upstream React, C: the
 * floor) as one multi-page production build into `bench/.tmp/dist`.
 * `BENCH_PROFILE=1` builds them unminified into `bench/.tmp/dist-profile`,
 * for CPU profiles with readable function names.
 */
import { fileURLToPath } from "node:url";
import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vite";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const profile = process.env.BENCH_PROFILE === "1";

export default defineConfig({
  root: here("."),
  base: "./",
  logLevel: "warn",
  plugins: [vue()],
  resolve: {
    // The library's current source, not a built copy.
    alias: [{ find: /^agents-vue$/, replacement: here("../../src/index.ts") }],
    dedupe: ["vue", "react", "react-dom"]
  },
  build: {
    outDir: here(profile ? "../.tmp/dist-profile" : "../.tmp/dist"),
    emptyOutDir: true,
    target: "es2022",
    manifest: true,
    minify: !profile,
    modulePreload: false,
    rollupOptions: {
      input: { a: here("a.html"), b: here("b.html"), c: here("c.html") }
    }
  }
});
