/**
 * Which model answers. Deployed (`vite build`): Workers AI, through the `AI`
 * binding. Under `npm run dev`: an offline scripted model, so the app runs
 * with no Cloudflare account; set `VITE_WORKERS_AI=1` (after
 * `npx wrangler login`) to talk to Workers AI from dev too.
 */
import type { LanguageModel } from "ai";
import { createWorkersAI } from "workers-ai-provider";

const WORKERS_AI_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

export async function chooseModel(env: Env): Promise<LanguageModel> {
  if (import.meta.env.DEV && import.meta.env.VITE_WORKERS_AI !== "1") {
    // A dynamic import: production builds leave the scripted model out.
    const { createScriptedModel } = await import("./scripted-model");
    return createScriptedModel();
  }
  return createWorkersAI({ binding: env.AI })(WORKERS_AI_MODEL);
}
