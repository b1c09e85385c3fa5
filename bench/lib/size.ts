/**
 * Sizes: esbuild minify, then gzip level 9. Used by the bench (Size scenario)
 * and by scripts/size-budget.ts and scripts/size-without.ts.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build, transform } from "esbuild";

export interface Size {
  raw: number;
  min: number;
  gzip: number;
}

const gzip = (text: string | Uint8Array) => gzipSync(text, { level: 9 }).length;

/** One ES module as published, minified on its own: its imports stay imports. */
export async function moduleSize(file: string): Promise<Size> {
  const source = readFileSync(file, "utf8");
  const { code } = await transform(source, { minify: true, format: "esm", target: "es2022", loader: "js" });
  return { raw: Buffer.byteLength(source), min: Buffer.byteLength(code), gzip: gzip(code) };
}

/**
 * A module bundled with the files it imports by relative path (its private
 * chunks), every bare import left external (peers and other packages),
 * tree-shaken to `exports`, minified.
 */
export async function bundleSize(file: string, exports: string[]): Promise<Size> {
  const result = await build({
    stdin: {
      contents: `export { ${exports.join(", ")} } from ${JSON.stringify(file)};`,
      resolveDir: dirname(file),
      loader: "js"
    },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    target: "es2022",
    platform: "neutral",
    logLevel: "silent",
    plugins: [
      {
        name: "externals",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
        }
      }
    ]
  });
  const code = result.outputFiles[0]!.contents;
  return { raw: readFileSync(file).length, min: code.length, gzip: gzip(code) };
}

/**
 * Where the minified bytes of a bundle come from: `entry` bundled with every
 * bare import external, minified; esbuild's `bytesInOutput` per input file.
 */
export async function sourceBreakdown(entry: string, root: string): Promise<Array<{ file: string; bytes: number }>> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    minify: true,
    metafile: true,
    format: "esm",
    target: "es2022",
    platform: "neutral",
    logLevel: "silent",
    outfile: "out.js",
    plugins: [
      {
        name: "externals",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
        }
      }
    ]
  });
  const inputs = Object.values(result.metafile.outputs)[0]?.inputs ?? {};
  return Object.entries(inputs)
    .map(([file, { bytesInOutput }]) => ({ file: file.startsWith(root) ? file.slice(root.length + 1) : file, bytes: bytesInOutput }))
    .toSorted((a, b) => b.bytes - a.bytes);
}

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

/** A built page: its HTML, entry chunk, statically imported chunks and CSS, each gzipped on its own. */
export function pageSize(distDir: string, entry: string): Size & { files: number } {
  const manifest = JSON.parse(readFileSync(join(distDir, ".vite", "manifest.json"), "utf8")) as Record<string, ManifestChunk>;
  const files = new Set<string>([entry]);
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const css of chunk.css ?? []) files.add(css);
    for (const next of chunk.imports ?? []) visit(next);
  };
  visit(entry);
  let raw = 0;
  let gz = 0;
  for (const file of files) {
    const bytes = readFileSync(join(distDir, file));
    raw += bytes.length;
    gz += gzip(bytes);
  }
  return { raw, min: raw, gzip: gz, files: files.size };
}

/** Builds of an app: its source (the entry), which imports stay imports, and stand-ins for modules left out. */
export interface AppBuild {
  /** The app's entry, TypeScript or JavaScript. */
  source: string;
  /** Where the entry's relative imports resolve from, and where Vite is installed. */
  root: string;
  /** A peer (or a subpath of one): it stays an import, as in an app that installs it. */
  isPeer: (id: string) => boolean;
  /** The TypeScript a module is replaced with, or undefined to build it as it is (`scripts/size-without.ts`). */
  standIn?: (path: string) => string | undefined;
}

const PRODUCTION = { "process.env.NODE_ENV": JSON.stringify("production") };

/** An app bundled by esbuild as a production build: tree-shaken, minified, `NODE_ENV=production`, peers left external. */
export async function esbuildApp({ source, root, isPeer, standIn = () => undefined }: AppBuild): Promise<Uint8Array> {
  const result = await build({
    stdin: { contents: source, resolveDir: root, loader: "ts" },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    define: PRODUCTION,
    logLevel: "silent",
    plugins: [
      {
        name: "peers-and-stand-ins",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => (isPeer(args.path) ? { path: args.path, external: true } : undefined));
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            const code = standIn(args.path);
            return code === undefined ? undefined : { contents: code, loader: "ts" };
          });
        }
      }
    ]
  });
  return result.outputFiles[0]!.contents;
}

/**
 * The same app bundled by Vite 8's own rolldown (resolved from vite, which `root` depends on, not whichever copy is
 * hoisted) as a production build.
 */
export async function rolldownApp({ source, root, isPeer, standIn = () => undefined }: AppBuild): Promise<string> {
  const { rolldown } = (await import(
    pathToFileURL(createRequire(createRequire(join(root, "package.json")).resolve("vite")).resolve("rolldown")).href
  )) as typeof import("rolldown");
  const app = "\0size-app";
  const bundle = await rolldown({
    input: app,
    platform: "browser",
    logLevel: "silent",
    transform: { define: PRODUCTION },
    external: (id) => isPeer(id),
    plugins: [
      {
        name: "size-app",
        resolveId: (id) => (id === app ? app : null),
        load: (id) => {
          if (id === app) return source;
          const code = standIn(id);
          return code === undefined ? null : { code, moduleType: "ts" as const };
        }
      }
    ]
  });
  try {
    const { output } = await bundle.generate({ format: "esm", minify: true });
    return output.map((chunk) => (chunk.type === "chunk" ? chunk.code : "")).join("");
  } finally {
    await bundle.close();
  }
}
