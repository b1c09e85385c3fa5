/**
 * Which model answers: the offline script by default, or a real one when
 * `AI_PROVIDER` is set (in `worker/.dev.vars`, or as a secret when deployed).
 */
import { createGateway, type LanguageModel } from "ai";
import { createOpenAICompatibleModel } from "./openai-compatible.ts";
import { createScriptedModel } from "./scripted-model.ts";

export function chooseModel(env: Cloudflare.Env): { model: LanguageModel; scripted: boolean } {
  const provider = (env.AI_PROVIDER ?? "scripted").trim().toLowerCase();
  switch (provider) {
    case "":
    case "scripted":
      return { model: createScriptedModel(), scripted: true };

    case "openai":
    case "openai-compatible":
      return {
        model: createOpenAICompatibleModel({
          baseURL: env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
          apiKey: required(env, "OPENAI_API_KEY"),
          model: env.AI_MODEL ?? "gpt-4o-mini"
        }),
        scripted: false
      };

    case "workers-ai":
      return {
        model: createOpenAICompatibleModel({
          provider: "workers-ai",
          baseURL: `https://api.cloudflare.com/client/v4/accounts/${required(env, "CLOUDFLARE_ACCOUNT_ID")}/ai/v1`,
          apiKey: required(env, "CLOUDFLARE_API_TOKEN"),
          model: env.AI_MODEL ?? "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
        }),
        scripted: false
      };

    case "gateway":
      return {
        model: createGateway({ apiKey: required(env, "AI_GATEWAY_API_KEY") })(env.AI_MODEL ?? "openai/gpt-5-mini"),
        scripted: false
      };

    default:
      throw new Error(`Unknown AI_PROVIDER "${env.AI_PROVIDER}" (use scripted, openai-compatible, workers-ai or gateway).`);
  }
}

function required(env: Cloudflare.Env, key: keyof Cloudflare.Env): string {
  const value = env[key];
  if (typeof value !== "string" || value === "") throw new Error(`AI_PROVIDER=${env.AI_PROVIDER} needs ${key} (see examples/chat/README.md).`);
  return value;
}
