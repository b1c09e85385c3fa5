/**
 * The JavaScript a built page loads before it can run: the module scripts
 * its index.html names, and every file those import statically, transitively.
 * Chunks reached only through `import()` are left out: they load later, when
 * the code asks for them. Used by `npm run test:consumer` to hold
 * examples/starter to its budget; pure file reading, tested in the unit tier.
 */
import { existsSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { gzipSync } from "node:zlib";

export interface InitialScript {
  /** Path under the built site's root, e.g. `assets/index-abc.js`. */
  path: string;
  bytes: number;
  gzipBytes: number;
}

/** The entry scripts an HTML page loads: `<script type="module" src>` and `<link rel="modulepreload" href>`. */
export function entryScripts(html: string): string[] {
  const found = new Set<string>();
  for (const tag of html.match(/<(?:script|link)\b[^>]*>/gi) ?? []) {
    const attribute = (name: string) => new RegExp(`\\b${name}\\s*=\\s*["']([^"']*)["']`, "i").exec(tag)?.[1];
    const isModule = /^<script/i.test(tag) && attribute("type") === "module" && attribute("src");
    const isPreload = /^<link/i.test(tag) && attribute("rel") === "modulepreload" && attribute("href");
    const url = isModule ? attribute("src") : isPreload ? attribute("href") : undefined;
    if (url && !/^[a-z]+:|^\/\//i.test(url)) found.add(url);
  }
  return [...found];
}

/** Relative specifiers a built module imports statically (`import … from "./x.js"`, `import "./x.js"`, `export … from`), not `import()`. */
export function staticImports(code: string): string[] {
  const found = new Set<string>();
  const pattern = /(?:^|[;}\s])(?:import|export)\s*(?:[\w$*{}\s,]*?\s*from\s*)?["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of code.matchAll(pattern)) found.add(match[1]!);
  return [...found];
}

/**
 * The initial JavaScript of the page `index.html` in `root` (a `vite build`
 * output folder): each file once, with its size and gzip size.
 */
export function initialJavaScript(root: string, page = "index.html"): { scripts: InitialScript[]; gzipBytes: number } {
  const read = (path: string) => readFileSync(posix.join(root, path));
  const queue = entryScripts(read(page).toString("utf8")).map((url) => posix.normalize(url.replace(/^\//, "").replace(/[?#].*$/, "")));
  const scripts = new Map<string, InitialScript>();
  while (queue.length > 0) {
    const path = queue.shift()!;
    // A match inside a string literal can name a file that is not there: nothing to load.
    if (scripts.has(path) || !existsSync(posix.join(root, path))) continue;
    const content = read(path);
    scripts.set(path, { path, bytes: content.length, gzipBytes: gzipSync(content).length });
    for (const specifier of staticImports(content.toString("utf8"))) queue.push(posix.join(posix.dirname(path), specifier));
  }
  const list = [...scripts.values()];
  return { scripts: list, gzipBytes: list.reduce((sum, script) => sum + script.gzipBytes, 0) };
}
