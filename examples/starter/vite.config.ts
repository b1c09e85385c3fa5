import { cloudflare } from "@cloudflare/vite-plugin";
import vue from "@vitejs/plugin-vue";
import { defineConfig } from "vite";

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
  ]
});
