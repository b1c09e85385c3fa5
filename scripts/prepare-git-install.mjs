/**
 * The `prepare` hook: builds dist/ when npm installs this package from git.
 *
 * npm never runs `prepack` for a git dependency: it clones the repo, installs
 * its dev dependencies, runs `prepare` only, and packs (pacote's DirFetcher).
 * Without this hook such an install has no dist/. In our own checkout
 * (`npm ci`, `npm pack`) npm was started in this folder, so we skip: installs
 * stay build-free and `npm pack` builds once, in `prepack`.
 *
 * Plain JavaScript: it runs under whatever Node the installing machine has.
 */
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";

const startedHere = realpathSync(process.env.INIT_CWD ?? process.cwd()) === realpathSync(process.cwd());
if (!startedHere) {
  const build = spawnSync("npm", ["run", "build"], { stdio: "inherit", shell: process.platform === "win32" });
  process.exit(build.status ?? 1);
}
