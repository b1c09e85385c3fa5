/**
 * `npm run new-app -- <folder>`: a new app from examples/starter, before
 * agents-vue is on the npm registry.
 *
 * Packs this checkout (`npm pack`: prepack builds dist/), copies
 * examples/starter to <folder> (not its node_modules or build output), puts
 * the tarball in it and points the app's `agents-vue` dependency at that
 * copy (`file:agents-vue-<version>.tgz`), so the folder can move anywhere and
 * `npm install` there needs nothing from this checkout. Names the app (its
 * package.json and its Worker in wrangler.jsonc) after the folder, then prints
 * the commands to run next.
 *
 * Plain JavaScript: it must explain itself under any Node, also before
 * `npm ci` has put Node 22 in node_modules/.bin.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const STARTER = join(ROOT, "examples", "starter");
/** What a starter that was run in place may hold and a new app must not copy. */
const SKIPPED = new Set(["node_modules", "dist", "out", ".wrangler", "package-lock.json"]);
const MIN_NODE = 22;

function fail(message) {
  console.error(`new-app: ${message}`);
  process.exit(1);
}

/** The Node that runs npm, i.e. the one `npm install` will use in the new app (npm_config_user_agent names it). */
function userNode() {
  const fromNpm = /\bnode\/v(\d+)\.\S*/.exec(process.env.npm_config_user_agent ?? "");
  return fromNpm ? { version: fromNpm[0].slice("node/".length), major: Number(fromNpm[1]) } : { version: process.version, major: Number(process.versions.node.split(".")[0]) };
}

/** A Worker and npm package name from a folder name: lower case, letters, digits and dashes. */
function appName(folder) {
  const name = basename(folder)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);
  return name || "my-chat";
}

const target = process.argv[2];
if (!target || target.startsWith("-")) {
  fail("name the folder for the new app, e.g. `npm run new-app -- ../my-chat`");
}
const app = resolve(process.env.INIT_CWD ?? process.cwd(), target);
if (app === ROOT || app.startsWith(ROOT + sep)) {
  fail(`${app} is inside this checkout; pick a folder outside it, e.g. ../my-chat`);
}
if (existsSync(app) && readdirSync(app).length > 0) {
  fail(`${app} exists and is not empty; pick a new folder`);
}
if (!existsSync(join(ROOT, "node_modules", ".bin", "tsdown"))) {
  fail("run `npm ci` in this checkout first (packing builds the library with its dev dependencies)");
}

const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const packDir = mkdtempSync(join(tmpdir(), "agents-vue-pack-"));
console.log(`new-app: packing ${manifest.name}@${manifest.version} (npm pack builds dist/ first)…`);
const pack = spawnSync("npm", ["pack", "--pack-destination", packDir, "--loglevel=error"], {
  cwd: ROOT,
  encoding: "utf8",
  shell: process.platform === "win32"
});
const packed = existsSync(packDir) ? readdirSync(packDir).filter((name) => name.endsWith(".tgz")) : [];
if (pack.status !== 0 || packed.length !== 1) {
  rmSync(packDir, { recursive: true, force: true });
  console.error(`${pack.stdout ?? ""}${pack.stderr ?? ""}`);
  fail(`npm pack failed (exit ${pack.status ?? pack.signal}); its output is above`);
}

cpSync(STARTER, app, { recursive: true, filter: (path) => !SKIPPED.has(basename(path)) });
const tarball = packed[0];
renameSync(join(packDir, tarball), join(app, tarball));
rmSync(packDir, { recursive: true, force: true });

const name = appName(app);
const appManifestFile = join(app, "package.json");
const appManifest = JSON.parse(readFileSync(appManifestFile, "utf8"));
appManifest.name = name;
appManifest.dependencies[manifest.name] = `file:${tarball}`;
writeFileSync(appManifestFile, `${JSON.stringify(appManifest, null, 2)}\n`);
const wranglerFile = join(app, "wrangler.jsonc");
const wrangler = readFileSync(wranglerFile, "utf8");
const renamed = wrangler.replace(/("name"\s*:\s*)"[^"]*"/, `$1"${name}"`);
if (renamed === wrangler) fail(`${wranglerFile} has no "name" to set`);
writeFileSync(wranglerFile, renamed);

const where = isAbsolute(target) ? app : relative(process.env.INIT_CWD ?? process.cwd(), app);
const node = userNode();
console.log(`
new-app: ${app} is ready: examples/starter, named ${name}, with ${manifest.name} from ${tarball}.`);
const cloneNode = join(ROOT, "node_modules", "node", "bin");
if (node.major < MIN_NODE) {
  // npm ci put Node 22 here (the `node` dev dependency): no download, no nvm needed.
  const path = cloneNode.includes(" ") ? JSON.stringify(cloneNode) : cloneNode;
  console.log(`
  agents-vue needs Node ${MIN_NODE} or newer to install and run; your npm runs on Node ${node.version}.
  This checkout already has Node ${MIN_NODE} (npm ci put it in node_modules/node/bin). To use it for the app,
  in the shell where you run the commands below (offline too):
    export PATH=${path}:$PATH
  or switch to Node ${MIN_NODE} another way (e.g. \`nvm install ${MIN_NODE}\`).`);
}
console.log(`
Next:
  cd ${where.includes(" ") ? JSON.stringify(where) : where}
  npm install
  npm run dev      # the app and its agent on http://localhost:5173, offline, no account needed

To take a newer agents-vue from this checkout later, run \`npm run new-app\` again into a new folder,
or \`npm pack\` here and install the new tarball in the app.`);
