import { LOCAL_MODEL, localAnswer, type PromptMessage } from "../../domain/ai-chat";
import type { ChatProvider } from "./ai-types";

/**
 * The local stand-in for development and tests (AI_PROVIDER=local): no network, no model. Its
 * answers start with "[local assistant]", say what they are, depend only on the prompt, and
 * come in several chunks like a real stream.
 */
export function localProvider(): ChatProvider {
  return {
    name: "local",
    model: LOCAL_MODEL,
    async *reply(prompt: readonly PromptMessage[]) {
      for (const text of localAnswer(prompt)) yield { text };
    },
  };
}
