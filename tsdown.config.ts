import { readFileSync } from "node:fs";
import { defineConfig } from "tsdown";

const { peerDependencies } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as {
  peerDependencies: Record<string, string>;
};

export default defineConfig({
  entry: { index: "src/index.ts", "server/index": "src/server/index.ts" },
  format: "esm",
  platform: "neutral",
  target: "es2022",
  dts: true,
  sourcemap: true,
  clean: true,
  deps: {
    // Peers and their subpaths stay imports; we bundle only our own code.
    neverBundle: [/^vue$/, /^ai($|\/)/, /^agents($|\/)/, /^@ai-sdk\//, /^nanoid$/, /^partysocket/],
    // The built files may import only what a user installs next to the package: its peers.
    onlyImport: Object.keys(peerDependencies)
  },
  outExtensions: () => ({ js: ".js", dts: ".d.ts" })
});
