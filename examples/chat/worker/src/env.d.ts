// The worker's bindings and variables (what `wrangler types` would generate).
declare namespace Cloudflare {
  interface Env {
    ChatAgent: DurableObjectNamespace;
    /** Unset or "scripted" (default), "openai-compatible", "workers-ai" or "gateway". */
    AI_PROVIDER?: string;
    AI_MODEL?: string;
    OPENAI_API_KEY?: string;
    OPENAI_BASE_URL?: string;
    CLOUDFLARE_ACCOUNT_ID?: string;
    CLOUDFLARE_API_TOKEN?: string;
    AI_GATEWAY_API_KEY?: string;
  }
}
