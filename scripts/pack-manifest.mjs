/**
 * `prepack` / `postpack`: the package.json inside the tarball has no `prepare`.
 *
 * `prepare` (scripts/prepare-git-install.mjs) exists for installs from git,
 * where npm clones the repo, runs `prepare` and packs it without `prepack`.
 * In a tarball (`npm pack`, `npm publish`, `npm run new-app`) it would point
 * at a file the tarball does not hold, and npm lists a `prepare` of a
 * `file:` or git dependency among the install scripts it asks about.
 *
 * `strip` (in prepack, after the build) keeps package.json's exact bytes in
 * `.package.json.prepack` and writes package.json without `scripts.prepare`;
 * npm then packs that file. `restore` (in postpack) puts the kept bytes back.
 * A pack that died between the two leaves the copy behind: the next `strip`
 * or `restore` puts it back first, so package.json never stays stripped.
 *
 * Plain JavaScript: it runs under whatever Node runs npm.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const MANIFEST = "package.json";
const KEPT = ".package.json.prepack";

function restore() {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
}

const command = process.argv[2];
if (command === "strip") {
  restore();
  const original = readFileSync(MANIFEST, "utf8");
  const manifest = JSON.parse(original);
  if (manifest.scripts?.prepare !== undefined) {
    writeFileSync(KEPT, original);
    delete manifest.scripts.prepare;
    writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  }
} else if (command === "restore") {
  restore();
} else {
  console.error(`usage: node scripts/pack-manifest.mjs strip|restore (got ${command ?? "nothing"})`);
  process.exit(2);
}
