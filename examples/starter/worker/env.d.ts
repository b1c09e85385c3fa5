// The Worker's bindings (wrangler.jsonc); `npm run cf-typegen` writes the full set.
interface Env {
  ChatAgent: DurableObjectNamespace;
  AI: Ai;
}

// Vite's import.meta.env, which the Cloudflare plugin gives the Worker too.
interface ImportMetaEnv {
  readonly DEV: boolean;
  readonly VITE_WORKERS_AI?: string;
}
interface ImportMeta {
  readonly env: ImportMetaEnv;
}
