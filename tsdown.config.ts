import { defineConfig } from "tsdown";

export default defineConfig({
  entry: { index: "src/index.ts", "server/index": "src/server/index.ts", "voice/index": "src/voice/index.ts" },
  format: "esm",
  platform: "neutral",
  target: "es2022",
  dts: true,
  sourcemap: true,
  clean: true,
  // Peers and their subpaths stay imports; we bundle only our own code.
  external: [/^vue$/, /^ai($|\/)/, /^agents($|\/)/, /^@ai-sdk\//, /^nanoid$/, /^partysocket/],
  outExtensions: () => ({ js: ".js", dts: ".d.ts" })
});
