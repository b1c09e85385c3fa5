/**
 * `npm run test:consumer`: agents-vue as a user installs it. Everything
 * happens in a fresh folder under the system temp dir:
 *
 * 1. the repo's files (tracked and untracked, not ignored: so no dist/) are
 *    copied there and packed with `npm pack`, as `npm publish` packs: only the
 *    `prepack` hook can put dist/ in the tarball;
 * 2. the tarball's files are checked (test/support/package-contents.ts), and
 *    the README's Install section and the CHANGELOG against package.json;
 *    `npm publish --dry-run` runs;
 * 3. the tarball is installed with its peers (the versions the repo's lockfile
 *    holds, from the shared npm cache) into a fresh Vite + Vue app
 *    (test/fixtures/consumer/vite-app), a copy of the test fixture worker whose
 *    `agents-vue/server` import now means the package, a copy of
 *    examples/nuxt without its src/ alias, a copy of examples/starter
 *    (its own package.json, agents-vue swapped for the tarball), and a
 *    scratch project holding the Testing guide's examples verbatim
 *    (test/support/readme-files.ts), run by Vitest with @vue/test-utils in
 *    jsdom and in browser mode;
 * 4. a TypeScript consumer is type-checked under `moduleResolution` bundler
 *    and node16, and so is the starter; the worker is bundled by
 *    `wrangler deploy --dry-run`; the apps are built; the starter is built
 *    with `vite build` (its initial JavaScript held to 150 kB gzip) and
 *    dry-run deployed as `npm run deploy` would;
 * 5. the worker copy and the chat demo's agent run under `wrangler dev`, the
 *    starter under its own `vite dev` (offline, its scripted model), and
 *    Chromium streams replies through the built Vite app (two turns with
 *    `sendOnlyNewMessages`, rebuilt by the installed server half), the
 *    starter (Markdown rendered, echoed HTML inert; at 1280×800 and 390×844
 *    it follows new replies and reopens a conversation at its end, shows no
 *    empty-state text while a history loads, keeps code chips dark in dark
 *    mode and says when the agent cannot be reached:
 *    test/support/starter-checks.ts) and the built Nuxt app.
 *
 * Prints each step with its time and exits non-zero on the first failure,
 * keeping the folder (its path is printed); `--keep` keeps it always.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright";
import { chromiumArgs, chromiumPath } from "../test/support/browser.ts";
import { initialJavaScript } from "../test/support/initial-js.ts";
import { STARTUP_TIMEOUTS } from "../test/support/startup.ts";
import { startNitro, type NitroServer } from "../test/support/nitro.ts";
import { checkReleaseDocs, checkTarball, readTarball, type PackageManifest, type PackedFile } from "../test/support/package-contents.ts";
import { askAndStream, until, withPage } from "../test/support/pages.ts";
import { readmeFiles } from "../test/support/readme-files.ts";
import { STARTER_VIEWPORTS, checkStarterConversation, checkStarterWrongAgent } from "../test/support/starter-checks.ts";
import { check, createSteps, run } from "../test/support/steps.ts";
import { startViteDev, type ViteDevServer } from "../test/support/vite-dev.ts";
import { startWorker, type WorkerServer } from "../test/support/wrangler.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURES = join(ROOT, "test", "fixtures", "consumer");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as PackageManifest;
const keep = process.argv.includes("--keep");
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NUXT_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  NO_COLOR: "1",
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false"
};
// One npm cache for every install (the machine's), and no network round trip for what it already holds.
const NPM_INSTALL = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];
/** The scratch project's Vitest config for the Testing guide's examples (see that step). */
const README_TESTS_CONFIG = `import { fileURLToPath } from "node:url";
import vue from "@vitejs/plugin-vue";
import { playwright } from "@vitest/browser-playwright";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [vue()],
  resolve: { alias: { "@": fileURLToPath(new URL("./src", import.meta.url)) } },
  test: {
    projects: [
      { extends: true, test: { name: "jsdom", environment: "jsdom", include: ["src/**/*.test.ts"], exclude: ["src/**/*.browser.test.ts"] } },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["src/**/*.browser.test.ts"],
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: { executablePath: process.env.CHROMIUM_PATH || undefined, args: JSON.parse(process.env.CHROMIUM_ARGS ?? "[]") } }),
            instances: [{ browser: "chromium" }]
          }
        }
      }
    ]
  }
});
`;
/** examples/starter's budget: the JavaScript its built page loads before it runs, gzipped (Vite's figure). */
const STARTER_INITIAL_JS_GZIP = 150_000;

const steps = createSteps();

/** The version of a package in the repo's lockfile (as installed in node_modules). */
function lockedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
}

function pinned(names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, lockedVersion(name)]));
}

/** The repo's files as a fresh clone plus uncommitted work has them: tracked and untracked, minus ignored. */
function repoFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" });
  return listed.split("\0").filter((path) => path && existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile());
}

function copyFiles(files: string[], from: string, to: string): void {
  for (const path of files) {
    const target = join(to, relative(from, join(ROOT, path)));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(join(ROOT, path), target);
  }
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** `node <package bin>` from an app's own node_modules, whatever Node this is. */
function binOf(appDir: string, name: string): string {
  return realpathSync(join(appDir, "node_modules", ".bin", name));
}

/**
 * Removes every alias entry that points into the repo's src/ from a Nuxt
 * config, keeping other aliases: the copy must resolve `agents-vue` to the
 * installed package. Works on the text, so it survives changes to the rest of
 * the example; throws when it finds nothing to remove or leaves a src/ path.
 */
function dropSourceAliases(config: string): string {
  let result = config;
  let removed = 0;
  const aliasAt = /\balias\s*:\s*[[{]/g;
  for (let match = aliasAt.exec(result); match; match = aliasAt.exec(result)) {
    const open = match.index + match[0].length - 1;
    const { close, commas } = literalAt(result, open);
    const bounds = [open, ...commas, close];
    const entries = bounds.slice(1).map((end, index) => result.slice(bounds[index]! + 1, end));
    const kept = entries.filter((entry) => entry.trim() !== "" && !/\bsrc\//.test(entry));
    removed += entries.filter((entry) => /\bsrc\//.test(entry)).length;
    result = result.slice(0, open + 1) + kept.join(",") + result.slice(close);
    aliasAt.lastIndex = open + 1;
  }
  check(removed > 0, "examples/nuxt/nuxt.config.ts has no alias into src/ to remove; update dropSourceAliases()");
  check(!/\bsrc\/index|\.\.\/\.\.\/src\b/.test(result), "the Nuxt config still points into the repo's src/ after removing its aliases");
  return result;
}

/** The closing bracket and top-level commas of the object or array literal opening at `open`, past strings and comments. */
function literalAt(text: string, open: number): { close: number; commas: number[] } {
  const commas: number[] = [];
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i]!;
    if (char === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (char === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (char === '"' || char === "'" || char === "`") {
      for (i++; i < text.length && text[i] !== char; i++) if (text[i] === "\\") i++;
    } else if ("([{".includes(char)) {
      depth++;
    } else if (")]}".includes(char)) {
      if (--depth === 0) return { close: i, commas };
    } else if (char === "," && depth === 1) {
      commas.push(i);
    }
  }
  throw new Error("unbalanced brackets in the Nuxt config");
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json"
};

/** Serves a built single-page app from `root` on 127.0.0.1 (index.html for unknown paths). */
function serveStatic(root: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
    let file = join(root, path);
    if (!file.startsWith(root + sep) || !existsSync(file) || statSync(file).isDirectory()) file = join(root, "index.html");
    response.writeHead(200, { "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      done({ origin: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, server });
    });
  });
}

function printFiles(files: PackedFile[], tarball: string): void {
  const width = Math.max(...files.map((file) => file.path.length));
  for (const file of files.toSorted((a, b) => a.path.localeCompare(b.path))) {
    console.log(`    ${file.path.padEnd(width)}  ${(file.size / 1000).toFixed(1).padStart(7)} kB`);
  }
  const unpacked = files.reduce((sum, file) => sum + file.size, 0);
  console.log(`    ${files.length} files, ${(unpacked / 1000).toFixed(1)} kB unpacked, ${(statSync(tarball).size / 1000).toFixed(1)} kB packed`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const work = mkdtempSync(join(realpathSync(tmpdir()), "agents-vue-consumer-"));
  console.log(`test:consumer in ${work}`);
  const packageDir = join(work, "package");
  const appDir = join(work, "vite-app");
  const workerDir = join(work, "worker");
  const nuxtDir = join(work, "nuxt");
  const starterDir = join(work, "starter");
  const readmeTestsDir = join(work, "readme-tests");
  const files = repoFiles();
  const filesUnder = (folder: string) => files.filter((path) => path.startsWith(`${folder}/`));

  let tarball = "";
  await steps.step("copy the repo (tracked and untracked files, so no dist/)", async () => {
    copyFiles(files, ROOT, packageDir);
    // prepack's build runs the repo's tools; packing itself ignores node_modules (no bundled dependencies).
    symlinkSync(join(ROOT, "node_modules"), join(packageDir, "node_modules"), "dir");
    check(!existsSync(join(packageDir, "dist")), "the copy has a dist/ before packing");
  });

  await steps.step("npm pack (as npm publish packs: prepack builds dist/)", async () => {
    await run("npm", ["pack", "--pack-destination", work, "--loglevel=error"], { cwd: packageDir, env, quiet: true });
    const packed = readdirSync(work).filter((name) => name.endsWith(".tgz"));
    check(packed.length === 1, `npm pack wrote ${packed.length} tarballs`);
    tarball = join(work, packed[0]!);
  });

  await steps.step("tarball contents: what package.json names, and nothing else", async () => {
    const packed = readTarball(readFileSync(tarball));
    printFiles(packed, tarball);
    // The package.json npm wrote into the tarball, which is what a user's tools read.
    const packedManifest = packed.find((file) => file.path === "package.json");
    check(packedManifest, "the tarball has no package.json");
    const problems = checkTarball(JSON.parse(packedManifest.content.toString("utf8")) as PackageManifest, packed);
    check(problems.length === 0, `the tarball is not what a user needs:\n- ${problems.join("\n- ")}`);
  });

  await steps.step("README Install section and CHANGELOG against package.json", async () => {
    const [readme, changelog] = ["README.md", "CHANGELOG.md"].map((name) => readFileSync(join(packageDir, name), "utf8"));
    const problems = checkReleaseDocs(manifest, readme!, changelog!);
    check(problems.length === 0, `- ${problems.join("\n- ")}`);
  });

  await steps.step("npm publish --dry-run", async () => {
    const output = await run("npm", ["publish", "--dry-run"], { cwd: packageDir, env, quiet: true });
    check(output.includes(`+ ${manifest.name}@${manifest.version}`), `npm publish --dry-run did not publish ${manifest.name}@${manifest.version}:\n${output}`);
  });

  const packageSpec = `file:${tarball}`;
  const peers = pinned(Object.keys(manifest.peerDependencies ?? {}));
  console.log(`  peers, as the repo's lockfile has them: ${Object.entries(peers).map(([name, version]) => `${name}@${version}`).join(" ")}`);

  await steps.step("install: a fresh Vite + Vue app", async () => {
    cpSync(join(FIXTURES, "vite-app"), appDir, { recursive: true });
    writeJson(join(appDir, "package.json"), {
      name: "consumer-vite-app",
      private: true,
      type: "module",
      dependencies: { [manifest.name]: packageSpec, ...peers },
      devDependencies: pinned(["vite", "@vitejs/plugin-vue", "typescript"])
    });
    await run("npm", NPM_INSTALL, { cwd: appDir, env, quiet: true });
  });

  await steps.step("install: a copy of the fixture worker", async () => {
    copyFiles(filesUnder("test/fixtures/worker").filter((path) => !path.endsWith("smoke.ts")), join(ROOT, "test", "fixtures", "worker"), workerDir);
    // The fixture imports the server half from src/; the copy imports it from the package, as a user's worker does.
    let rewrites = 0;
    for (const name of readdirSync(join(workerDir, "src"))) {
      const file = join(workerDir, "src", name);
      const source = readFileSync(file, "utf8").replace(/(["'])(?:\.\.\/)+src\/server(?:\/index(?:\.ts)?)?\1/g, (_, quote: string) => {
        rewrites++;
        return `${quote}${manifest.name}/server${quote}`;
      });
      check(!/from\s+["']\.\.\//.test(source), `the worker copy's ${name} still imports from outside the worker`);
      writeFileSync(file, source);
    }
    check(rewrites > 0, "the fixture worker no longer imports src/server; update the consumer tier");
    writeJson(join(workerDir, "package.json"), {
      name: "consumer-worker",
      private: true,
      type: "module",
      dependencies: { [manifest.name]: packageSpec, ...pinned(["@cloudflare/ai-chat", "agents", "ai"]) }
    });
    await run("npm", NPM_INSTALL, { cwd: workerDir, env, quiet: true });
  });

  await steps.step("install: a copy of examples/nuxt (no src/ alias)", async () => {
    copyFiles(filesUnder("examples/nuxt"), join(ROOT, "examples", "nuxt"), nuxtDir);
    const configFile = join(nuxtDir, "nuxt.config.ts");
    writeFileSync(configFile, dropSourceAliases(readFileSync(configFile, "utf8")));
    const appManifest = JSON.parse(readFileSync(join(nuxtDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    appManifest.dependencies = { ...appManifest.dependencies, [manifest.name]: packageSpec, ...pinned(["agents", "ai"]) };
    writeJson(join(nuxtDir, "package.json"), appManifest);
    // Its own lockfile keeps Nuxt's tree as the example pins it; only our package and its peers are new.
    await run("npm", NPM_INSTALL, { cwd: nuxtDir, env, quiet: true });
  });

  await steps.step("install: a copy of examples/starter (its own package.json)", async () => {
    copyFiles(filesUnder("examples/starter"), join(ROOT, "examples", "starter"), starterDir);
    const file = join(starterDir, "package.json");
    const starter = JSON.parse(readFileSync(file, "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    check(
      starter.dependencies[manifest.name] === `^${manifest.version}`,
      `examples/starter depends on ${manifest.name}@${starter.dependencies[manifest.name]}, not on the version this repo publishes (^${manifest.version})`
    );
    starter.dependencies[manifest.name] = packageSpec;
    // What the repo's lockfile holds where the repo has the package, so the run does not follow the registry's newest.
    for (const group of [starter.dependencies, starter.devDependencies]) {
      for (const name of Object.keys(group)) {
        if (name !== manifest.name && existsSync(join(ROOT, "node_modules", name, "package.json"))) group[name] = lockedVersion(name);
      }
    }
    writeJson(file, starter);
    await run("npm", NPM_INSTALL, { cwd: starterDir, env, quiet: true });
  });

  await steps.step("install: a scratch project with the Testing guide's examples, verbatim (@vue/test-utils, jsdom)", async () => {
    const files = readmeFiles(readFileSync(join(ROOT, "docs/guide/testing.md"), "utf8"));
    const paths = files.map((file) => file.path);
    for (const expected of ["src/components/Chat.vue", "src/components/Chat.test.ts", "src/components/Counter.test.ts"]) {
      check(paths.includes(expected), `the Testing guide (docs/guide/testing.md) no longer shows ${expected} (it shows ${paths.join(", ")}); update the consumer tier`);
    }
    for (const file of files) {
      mkdirSync(dirname(join(readmeTestsDir, file.path)), { recursive: true });
      writeFileSync(join(readmeTestsDir, file.path), file.text);
    }
    // What a Vite + Vue app's Vitest setup holds: the Vue plugin, the `@` alias to src/, jsdom for *.test.ts and
    // browser mode (Chromium through Playwright) for *.browser.test.ts, as the guide's examples are named.
    writeFileSync(join(readmeTestsDir, "vitest.config.ts"), README_TESTS_CONFIG);
    writeJson(join(readmeTestsDir, "package.json"), {
      name: "consumer-readme-tests",
      private: true,
      type: "module",
      dependencies: { [manifest.name]: packageSpec, ...peers },
      devDependencies: pinned(["vitest", "@vitest/browser-playwright", "playwright", "vite", "@vitejs/plugin-vue", "@vue/test-utils", "jsdom"])
    });
    await run("npm", NPM_INSTALL, { cwd: readmeTestsDir, env, quiet: true });
  });

  await steps.step("type-check: a consumer (moduleResolution bundler, node16)", async () => {
    const tsc = binOf(appDir, "tsc");
    for (const config of ["tsconfig.bundler.json", "tsconfig.node16.json"]) {
      await run(process.execPath, [tsc, "-p", join("types", config)], { cwd: appDir, env, quiet: true });
    }
  });

  await steps.step("build: the Vite app (vite build), developer diagnostics dropped", async () => {
    await run(process.execPath, [binOf(appDir, "vite"), "build"], { cwd: appDir, env, quiet: true });
    const assets = join(appDir, "dist", "assets");
    const code = readdirSync(assets).filter((name) => name.endsWith(".js")).map((name) => readFileSync(join(assets, name), "utf8")).join("\n");
    check(code.includes("Could not load the transcript"), "the production bundle lost a warning a user must see (failed transcript reads)");
    for (const diagnostic of ["[agents-vue] Deprecated: ", "was called outside a component setup"]) {
      check(!code.includes(diagnostic), `the production bundle still holds the developer diagnostic "${diagnostic}"`);
    }
  });

  await steps.step("build: the worker with agents-vue/server (wrangler deploy --dry-run)", async () => {
    const out = join(workerDir, "out");
    await run(process.execPath, [WRANGLER, "deploy", "--dry-run", "--outdir", out, "--metafile", join(out, "meta.json")], {
      cwd: workerDir,
      env,
      quiet: true
    });
    const inputs = Object.keys((JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as { inputs: object }).inputs);
    const fromPackage = inputs.filter((path) => path.includes(`node_modules/${manifest.name}/`));
    // dist/server/index.js and the chunks it shares with the client entry (the ordered wire's frame names).
    check(
      fromPackage.some((path) => path.endsWith("dist/server/index.js")) &&
        fromPackage.every((path) => path.includes(`node_modules/${manifest.name}/dist/`)),
      `the bundle should take agents-vue/server from the installed dist/server/index.js (and dist/ chunks only), took: ${fromPackage.join(", ") || "nothing"}`
    );
    check(!inputs.some((path) => path.startsWith("..")), `the bundle reads files outside the worker: ${inputs.filter((path) => path.startsWith("..")).join(", ")}`);
    check(!inputs.some((path) => /node_modules\/(?:vue|@vue)\//.test(path)), "the server half pulled Vue into the worker bundle");
  });

  await steps.step("build: the Nuxt app (nuxt build)", async () => {
    await run(process.execPath, [binOf(nuxtDir, "nuxt"), "build"], { cwd: nuxtDir, env, quiet: true });
  });

  await steps.step("type-check: the starter (vue-tsc for the app, tsc for the worker)", async () => {
    await run(process.execPath, [binOf(starterDir, "vue-tsc"), "--noEmit", "-p", "tsconfig.json"], { cwd: starterDir, env, quiet: true });
    await run(process.execPath, [binOf(starterDir, "tsc"), "--noEmit", "-p", join("worker", "tsconfig.json")], { cwd: starterDir, env, quiet: true });
  });

  await steps.step("build: the starter (vite build, initial JavaScript within budget) and its deploy (wrangler deploy --dry-run)", async () => {
    await run(process.execPath, [binOf(starterDir, "vite"), "build"], { cwd: starterDir, env, quiet: true });
    check(existsSync(join(starterDir, "dist", "client", "index.html")), "vite build wrote no dist/client/index.html for the assets");
    // A starter's first page stays light: what loads before it runs, not the chunks it imports later (Markdown).
    const initial = initialJavaScript(join(starterDir, "dist", "client"));
    const listed = initial.scripts.map((script) => `${script.path} ${(script.gzipBytes / 1000).toFixed(1)} kB`).join(", ");
    console.log(`    initial JavaScript: ${(initial.gzipBytes / 1000).toFixed(1)} kB gzip (budget ${STARTER_INITIAL_JS_GZIP / 1000} kB): ${listed}`);
    check(initial.scripts.length > 0, "found no module script in the starter's dist/client/index.html");
    check(
      initial.gzipBytes <= STARTER_INITIAL_JS_GZIP,
      `the starter's initial JavaScript is ${(initial.gzipBytes / 1000).toFixed(1)} kB gzip, over its ${STARTER_INITIAL_JS_GZIP / 1000} kB budget (${listed}); load what only some pages or replies need with import()`
    );
    const out = join(starterDir, "out");
    const output = await run(process.execPath, [binOf(starterDir, "wrangler"), "deploy", "--dry-run", "--outdir", out], { cwd: starterDir, env, quiet: true });
    check(/env\.AI\b/.test(output) && /env\.ChatAgent\b/.test(output), `the dry run does not bind AI and ChatAgent:\n${output}`);
    check(/assets directory/i.test(output), `the dry run uploads no static assets:\n${output}`);
    const bundled = readdirSync(out).filter((name) => name.endsWith(".js")).map((name) => readFileSync(join(out, name), "utf8")).join("\n");
    check(bundled.includes("AIChatAgent") || bundled.includes("cf_agent_use_chat"), "the deployed bundle holds no AIChatAgent");
    check(!bundled.includes("offline scripted model"), "the deployed bundle holds the offline scripted model; it is for `npm run dev` only");
  });

  await steps.step("vitest: the Testing guide's examples pass as written (jsdom and browser mode, default options)", async () => {
    const testFiles = readdirSync(join(readmeTestsDir, "src", "components")).filter((name) => name.endsWith(".test.ts"));
    const output = await run(process.execPath, [binOf(readmeTestsDir, "vitest"), "run"], {
      cwd: readmeTestsDir,
      env: { ...env, CHROMIUM_PATH: chromiumPath() ?? "", CHROMIUM_ARGS: JSON.stringify(chromiumArgs) },
      quiet: true
    });
    // oxlint-disable-next-line no-control-regex -- colour codes, if any, around the summary
    const summary = /Tests\s+(\d+) passed \((\d+)\)/.exec(output.replace(/\x1b\[[0-9;]*m/g, ""));
    check(
      summary && summary[1] === summary[2] && Number(summary[1]) === testFiles.length,
      `vitest did not pass one test per test file of the Testing guide (${testFiles.join(", ")}):\n${output.trim().split("\n").slice(-20).join("\n")}`
    );
    console.log(`    ${summary[1]} tests passed: ${testFiles.join(", ")}`);
  });

  let fixture: WorkerServer | undefined;
  let demo: WorkerServer | undefined;
  let nitro: NitroServer | undefined;
  let site: Server | undefined;
  let starterDev: ViteDevServer | undefined;
  let browser: Browser | undefined;
  try {
    [fixture, demo] = await steps.step("start: the worker copy and the chat demo's agent (wrangler dev)", () =>
      Promise.all([
        startWorker({ configPath: join(workerDir, "wrangler.jsonc") }),
        startWorker({ configPath: join(ROOT, "examples", "chat", "worker", "wrangler.jsonc") })
      ])
    );
    const served = await serveStatic(join(appDir, "dist"));
    site = served.server;
    nitro = await startNitro(nuxtDir, { ...env, NUXT_PUBLIC_AGENT_HOST: demo.host });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: chromiumArgs, headless: true, timeout: STARTUP_TIMEOUTS.browserLaunchMs });
    const openBrowser = browser;
    const worker = fixture;
    const nuxtOrigin = nitro.origin;

    await steps.step("chromium: the Vite app streams two replies (sendOnlyNewMessages, server half)", async () => {
      const name = `consumer-${Date.now()}`;
      await withPage(openBrowser, `${served.origin}/?host=${worker.host}&name=${name}`, async (page, frames) => {
        const first = await askAndStream(page, frames, "first question");
        check(first.text.trim() === "echo: first question", `the first reply was "${first.text}"`);
        const second = await askAndStream(page, frames, "second question");
        check(second.text.trim() === "echo: second question", `the second reply was "${second.text}"`);
        const sent = second.requestBody as { messages?: unknown[]; afterMessageId?: unknown };
        check(
          typeof sent.afterMessageId === "string" && sent.messages?.length === 1,
          `the second request should carry only the new question and afterMessageId: ${JSON.stringify(second.requestBody).slice(0, 300)}`
        );
        const stored = (await (await fetch(`${worker.origin}/agents/scripted-chat-agent/${name}/get-messages`)).json()) as Array<{ role: string }>;
        check(
          stored.map((message) => message.role).join(",") === "user,assistant,user,assistant",
          `the agent stored ${stored.length} messages (${stored.map((message) => message.role).join(",")}), not the whole transcript`
        );
      });
    });

    starterDev = await steps.step("start: the starter's vite dev (app and Worker in one process)", () => startViteDev(starterDir, env));
    const starterOrigin = starterDev.origin;
    const starterServer = starterDev;

    await steps.step("chromium: the starter's vite dev streams a reply, offline, as Markdown, and runs no HTML it echoes", async () => {
      await withPage(openBrowser, `${starterOrigin}/#consumer-${Date.now()}`, async (page, frames) => {
        const reply = await askAndStream(page, frames, "Hello from the starter");
        check(reply.text.startsWith("You said: Hello from the starter"), `the starter's scripted model answered "${reply.text}"`);
        const bold = await page.locator("article[data-role='assistant'] strong").first().textContent();
        check(bold === "offline scripted model", `the reply's Markdown is not rendered (first <strong>: ${bold})`);
        const hostile = '<img src="data:," onerror="window.pwned = 1"> <script>window.pwned = 2</script> **still bold**';
        const sentBefore = frames.sent.length;
        await page.getByTestId("chat-input").fill(hostile);
        await page.getByTestId("chat-input").press("Enter");
        const request = await until(() => frames.sent.slice(sentBefore).find((frame) => frame.type === "cf_agent_use_chat_request"), 15_000, "the hostile question");
        await until(() => frames.received.find((frame) => frame.type === "cf_agent_use_chat_response" && frame.id === request.id && frame.done), 30_000, "its reply");
        await page.locator("article[data-role='assistant'] strong", { hasText: "still bold" }).waitFor({ timeout: 15_000 });
        const found = await page.evaluate(() => ({
          pwned: (window as unknown as { pwned?: number }).pwned,
          scripts: document.querySelectorAll("article script").length,
          handlers: [...document.querySelectorAll("article *")].filter((node) => [...node.attributes].some((attribute) => /^on/i.test(attribute.name))).length
        }));
        check(found.pwned === undefined && found.scripts === 0 && found.handlers === 0, `the echoed HTML ran or stayed live: ${JSON.stringify(found)}`);
      });
      // A quiet start, offline too: no Request.cf download (and so no ENOTFOUND stack trace when it fails).
      const printed = starterServer.output();
      check(!/Request\.cf|workers\.cloudflare\.com|ENOTFOUND|EAI_AGAIN/.test(printed), `the starter's vite dev printed a network failure:\n${printed}`);
    });

    for (const viewport of STARTER_VIEWPORTS) {
      await steps.step(
        `chromium: the starter at ${viewport.width}×${viewport.height}: follows new replies, reopens at the end, no empty-state flash, dark code chips`,
        () => checkStarterConversation(openBrowser, starterOrigin, viewport)
      );
      await steps.step(`chromium: the starter at ${viewport.width}×${viewport.height}: a mistyped agent shows connectionError in plain words`, () =>
        checkStarterWrongAgent(openBrowser, starterOrigin, viewport)
      );
    }

    await steps.step("chromium: the Nuxt app streams a reply", async () => {
      await withPage(openBrowser, nuxtOrigin, async (page, frames) => {
        const reply = await askAndStream(page, frames, "Does the installed package work?");
        check(reply.text.includes("Does the installed package work?"), `the demo agent's reply does not echo the question: "${reply.text}"`);
      });
    });
  } finally {
    await browser?.close();
    nitro?.stop();
    await starterDev?.stop();
    site?.close();
    await Promise.all([fixture?.stop(), demo?.stop()]);
  }

  if (!keep) rmSync(work, { recursive: true, force: true });
  console.log(`\ntest:consumer passed in ${((Date.now() - started) / 1000).toFixed(1)} s (${steps.summary()})`);
}

main().catch((error: unknown) => {
  console.error(`\ntest:consumer failed: ${error instanceof Error ? error.message : String(error)}`);
  console.error("The folder is kept for a look; it is named on the first line above.");
  process.exit(1);
});
