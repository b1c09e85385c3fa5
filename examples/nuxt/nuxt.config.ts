import { fileURLToPath } from "node:url";

// The agents-vue example for Nuxt, with Nuxt UI's chat components. The page
// is rendered on the server with the stored transcript (app/app.vue); the live
// chat mounts in the browser only, inside <ClientOnly>. The library comes from
// the repo's source, like the Vite demo.
export default defineNuxtConfig({
  compatibilityDate: "2026-11-01",
  devtools: { enabled: false },
  telemetry: false,
  // @comark/nuxt: Markdown in replies (ChatMarkdown), drawn with Nuxt UI's prose components.
  modules: ["@nuxt/ui", "@comark/nuxt"],
  css: ["~/assets/css/main.css"],
  // Offline builds: no web fonts fetched at build time (Nuxt UI's @nuxt/fonts is off),
  // and icons come from the installed @iconify-json/lucide, never from the Iconify API.
  ui: { fonts: false },
  icon: {
    provider: "server",
    fallbackToApi: false,
    serverBundle: { collections: ["lucide"] },
    clientBundle: { scan: true }
  },
  alias: {
    "agents-vue": fileURLToPath(new URL("../../src/index.ts", import.meta.url))
  },
  vite: {
    // The library's source imports `vue` from the repo root; use this app's copy.
    resolve: { dedupe: ["vue"] }
  },
  runtimeConfig: {
    // Where the Nuxt server reads transcripts from (NUXT_AGENT_ORIGIN), when it is
    // not `http(s)://` + agentHost, e.g. a private address of the worker.
    agentOrigin: "",
    public: {
      // Where the agent runs: the chat demo's worker under `wrangler dev`.
      // Override at runtime with NUXT_PUBLIC_AGENT_HOST.
      agentHost: "127.0.0.1:8787"
    }
  }
});
