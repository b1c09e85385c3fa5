import { cloudflare } from "@cloudflare/vite-plugin";
import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vite";

// `vite dev` gives requests a placeholder `request.cf` (country, colo, …) instead of downloading
// a real sample from workers.cloudflare.com: the app does not read it, and offline the download
// fails with a stack trace. CLOUDFLARE_CF_FETCH_ENABLED=true in the environment downloads it.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

// The Vue app and the Worker in one Vite: `vite dev` runs the Worker in workerd
// next to the app's dev server, `vite build` builds both for `wrangler deploy`.
export default defineConfig({
  plugins: [
    vue(),
    cloudflare({
      // Offline by default: the scripted model answers in dev, so nothing needs the AI binding there.
      // Set VITE_WORKERS_AI=1 (after `npx wrangler login`) to use Workers AI from `npm run dev`.
      remoteBindings: process.env.VITE_WORKERS_AI === "1"
    })
  ],
  build: {
    rolldownOptions: {
      output: {
        // The Markdown renderer loads after the page (src/App.vue). Its parser is a chunk of its own,
        // so both halves download side by side and no chunk passes Vite's 500 kB warning.
        codeSplitting: { groups: [{ name: "markdown-parser", test: /[\\/]node_modules[\\/]stream-markdown-parser[\\/]/ }] }
      }
    }
  }
});
