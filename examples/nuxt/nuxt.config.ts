import { fileURLToPath } from "node:url";

// The agents-vue example for Nuxt: the chat renders only in the browser,
// inside <ClientOnly> (see app/app.vue). The library comes from the repo's
// source, like the Vite demo.
export default defineNuxtConfig({
  compatibilityDate: "2026-11-01",
  devtools: { enabled: false },
  telemetry: false,
  alias: {
    "agents-vue": fileURLToPath(new URL("../../src/index.ts", import.meta.url))
  },
  vite: {
    // The library's source imports `vue` from the repo root; use this app's copy.
    resolve: { dedupe: ["vue"] }
  },
  runtimeConfig: {
    public: {
      // Where the agent runs: the chat demo's worker under `wrangler dev`.
      // Override at runtime with NUXT_PUBLIC_AGENT_HOST.
      agentHost: "127.0.0.1:8787"
    }
  }
});
