import { fileURLToPath } from "node:url";
import vue from "@vitejs/plugin-vue";
import { type LogLevel, type Logger, createLogger, defineConfig } from "vite";

/**
 * The page talks to the agent same-origin: Vite proxies `/agents/*` (HTTP and
 * WebSocket) to `wrangler dev`, the way a deployed Worker would serve both.
 * `npm run demo` passes the worker's origin; on your own, run `wrangler dev`
 * in ./worker (port 8787) and `vite` here.
 */
export const agentProxy = (origin: string) => ({
  "/agents": { target: origin, ws: true, changeOrigin: true }
});

/**
 * Vite's logger, minus routine WebSocket proxy noise: a tab that reloads drops
 * its socket mid-frame (ECONNRESET / EPIPE), and while the agent is down every
 * reconnect attempt is refused (ECONNREFUSED; the page shows "Reconnecting").
 */
export function demoLogger(level: LogLevel = "info"): Logger {
  const logger = createLogger(level);
  const logError = logger.error.bind(logger);
  logger.error = (message, options) => {
    const code = (options?.error as NodeJS.ErrnoException | undefined)?.code;
    if (message.includes("ws proxy") && (code === "ECONNRESET" || code === "EPIPE" || code === "ECONNREFUSED")) return;
    logError(message, options);
  };
  return logger;
}

export default defineConfig({
  customLogger: demoLogger(),
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [vue()],
  resolve: {
    // Always the library's current source, not a built copy.
    alias: [
      { find: /^agents-vue$/, replacement: fileURLToPath(new URL("../../src/index.ts", import.meta.url)) },
      { find: /^agents-vue\/persist$/, replacement: fileURLToPath(new URL("../../src/persist/index.ts", import.meta.url)) }
    ],
    dedupe: ["vue"]
  },
  // Pre-bundle the library's dependencies up front, so the first visit does not
  // trigger a "new dependencies optimized" reload.
  optimizeDeps: { include: ["vue", "ai", "agents/client", "agents/chat/transport", "markstream-vue"] },
  server: {
    host: "127.0.0.1",
    // The worker is not part of the page; wrangler's bundles and the agents'
    // storage (worker/.wrangler) change all the time.
    watch: { ignored: ["**/worker/**"] },
    proxy: agentProxy(process.env.AGENT_ORIGIN ?? "http://127.0.0.1:8787")
  },
  clearScreen: false
});
