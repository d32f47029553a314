import type { Env } from "../../env";
import { localProvider } from "./local";
import { openAiProvider } from "./openai";
import type { ChatProvider } from "./ai-types";
import { workersAiProvider } from "./workers-ai";

/**
 * The chat's provider, chosen by AI_PROVIDER (docs/api.md, "AI chat"), or why there is none:
 * a deployment without the `[ai]` binding or the endpoint its choice needs.
 */
export function chatProvider(env: Env): ChatProvider | { unavailable: string } {
  switch (env.AI_PROVIDER) {
    case "workers-ai":
      return env.AI ? workersAiProvider(env.AI, env.AI_MODEL) : { unavailable: "AI_PROVIDER is workers-ai but the Worker has no AI binding" };
    case "openai":
      return env.AI_OPENAI_URL
        ? openAiProvider({ baseUrl: env.AI_OPENAI_URL, apiKey: env.AI_OPENAI_API_KEY, model: env.AI_MODEL })
        : { unavailable: "AI_PROVIDER is openai but AI_OPENAI_URL is not set" };
    case "local":
      return localProvider();
    default:
      return { unavailable: `AI_PROVIDER must be "workers-ai", "openai" or "local", not ${JSON.stringify(env.AI_PROVIDER)}` };
  }
}
