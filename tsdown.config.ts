import { readFileSync } from "node:fs";
import { defineConfig, type Rolldown } from "tsdown";

const { peerDependencies } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as {
  peerDependencies: Record<string, string>;
};

export default defineConfig({
  entry: { index: "src/index.ts", "server/index": "src/server/index.ts", "voice/index": "src/voice/index.ts", "wire/index": "src/wire/index.ts", "persist/index": "src/persist/index.ts", "testing/index": "src/testing/index.ts" },
  format: "esm",
  platform: "neutral",
  target: "es2022",
  // No declaration maps: they would point at src/, which the package does not ship.
  dts: { sourcemap: false },
  sourcemap: true,
  clean: true,
  deps: {
    // Peers and their subpaths stay imports; we bundle only our own code.
    neverBundle: [/^vue$/, /^ai($|\/)/, /^agents($|\/)/, /^@ai-sdk\//, /^nanoid$/, /^partysocket/],
    // The built files may import only what a user installs next to the package: its peers.
    onlyImport: Object.keys(peerDependencies)
  },
  outExtensions: () => ({ js: ".js", dts: ".d.ts" }),
  plugins: [dropDeclarationMapComments()]
});

/** The dts plugin drops the `.d.ts.map` files but leaves their `sourceMappingURL` comment behind. */
function dropDeclarationMapComments(): Rolldown.Plugin {
  return {
    name: "drop-declaration-map-comments",
    generateBundle(_options, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type === "chunk" && chunk.fileName.endsWith(".d.ts")) {
          chunk.code = chunk.code.replace(/\n\/\/# sourceMappingURL=\S+\.d\.ts\.map\s*$/, "\n");
        }
      }
    }
  };
}
