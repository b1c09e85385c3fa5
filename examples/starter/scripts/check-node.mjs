// Runs before `npm install` and `npm run deploy` (preinstall, predeploy): on a Node older than 22 it
// stops with a message that says so, before anything fails further in (Vite or wrangler refusing to
// start). npm 10.9 and newer stop sooner, at once, on package.json's `devEngines`; this is for older
// npm and other package managers. Plain JavaScript, so any Node can run it.
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(
    `\nagents-vue needs Node 22 or newer (so do ai 7, Vite and wrangler); this is Node ${process.version}.\n` +
      "Install Node 22 (for example `nvm install 22`), then run the command again.\n"
  );
  process.exit(1);
}
