import { fileURLToPath } from "node:url";
import { defineConfig } from "vitepress";
import { apiReference } from "./api.ts";

const source = (path: string) => fileURLToPath(new URL(`../../src/${path}`, import.meta.url));

/** The guides, in reading order: the sidebar and the "next page" links follow it. */
const guides = [
  { text: "Streaming and stop", link: "/guide/streaming" },
  { text: "Tools and approvals", link: "/guide/tools" },
  { text: "Many tabs and reconnects", link: "/guide/reconnects" },
  { text: "Frames of your own", link: "/guide/frames" },
  { text: "Exact sync", link: "/guide/exact-sync" },
  { text: "Requests that stay small", link: "/guide/small-requests" },
  { text: "Surviving a reload (persist)", link: "/guide/persist" },
  { text: "Think", link: "/guide/think" },
  { text: "useAgent: state and RPC", link: "/guide/use-agent" },
  { text: "Agent tools", link: "/guide/agent-tools" },
  { text: "Sharing one chat", link: "/guide/sharing" },
  { text: "SSR, Nuxt and Nuxt UI", link: "/guide/nuxt" },
  { text: "AI Elements (shadcn-vue)", link: "/guide/ai-elements" },
  { text: "Rendering messages", link: "/guide/rendering" },
  { text: "Voice", link: "/guide/voice" },
  { text: "Testing your components", link: "/guide/testing" },
  { text: "Vue Devtools", link: "/guide/devtools" }
];

const reference = [
  { text: "Overview", link: "/api/" },
  { text: "useAgentChat", link: "/api/use-agent-chat" },
  { text: "useAgent", link: "/api/use-agent" },
  { text: "useAgentToolEvents", link: "/api/use-agent-tool-events" },
  { text: "Helpers and types", link: "/api/helpers" },
  { text: "agents-vue/server", link: "/api/server" },
  { text: "agents-vue/voice", link: "/api/voice" },
  { text: "agents-vue/wire", link: "/api/wire" },
  { text: "agents-vue/persist", link: "/api/persist" },
  { text: "agents-vue/testing", link: "/api/testing" }
];

const sidebar = [
  {
    text: "Introduction",
    items: [
      { text: "Getting started", link: "/guide/getting-started" },
      { text: "Playground", link: "/playground" }
    ]
  },
  { text: "Guides", items: guides },
  { text: "API reference", items: reference },
  {
    text: "More",
    items: [
      { text: "Parity with upstream", link: "/parity" },
      { text: "Supported versions", link: "/versions" },
      { text: "Troubleshooting", link: "/troubleshooting" },
      { text: "Working on agents-vue", link: "/contributing" }
    ]
  }
];

export default defineConfig({
  title: "agents-vue",
  description: "Vue 3 composables for Cloudflare Agents: useAgentChat, useAgent and voice over the cf_agent_* WebSocket protocol.",
  lang: "en-US",
  // Light and dark, following the system until the reader picks one.
  appearance: true,
  lastUpdated: false,
  markdown: {
    // The API reference: declarations and doc comments under each export's heading (see ./api.ts).
    config: (md) => apiReference(md)
  },
  themeConfig: {
    nav: [
      { text: "Guide", link: "/guide/getting-started", activeMatch: "^/guide/" },
      { text: "Playground", link: "/playground" },
      { text: "API", link: "/api/", activeMatch: "^/api/" },
      { text: "Parity", link: "/parity" }
    ],
    sidebar: { "/": sidebar },
    outline: { level: [2, 3] },
    search: { provider: "local" },
    footer: { message: "MIT licensed. Vue port of Cloudflare's React client for Agents." }
  },
  vite: {
    resolve: {
      // The site documents the library's current source, so the playground runs it, not a built copy.
      alias: [
        { find: /^agents-vue$/, replacement: source("index.ts") },
        { find: /^agents-vue\/testing$/, replacement: source("testing/index.ts") }
      ],
      dedupe: ["vue"]
    },
    // Pre-bundled up front, so the first visit to the playground under `docs:dev` does not reload the page.
    optimizeDeps: { include: ["ai", "agents/client", "agents/chat/transport"] }
  }
});
