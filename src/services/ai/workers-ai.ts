import type { PromptMessage } from "../../domain/ai-chat";
import { openAiPieces } from "./openai";
import { sseMessages } from "./sse-stream";
import { AiProviderError, type ChatProvider, type ReplyPiece } from "./ai-types";

/** What the adapter needs of the Workers AI binding (`env.AI`). */
export interface WorkersAiBinding {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}

/**
 * The pieces of one `data:` of a Workers AI stream: `{"response": "..."}` deltas and a last
 * `usage`, or, from models that speak it, the OpenAI chunk format. "done" for `[DONE]`.
 */
export function workersAiPieces(data: string): ReplyPiece[] | "done" {
  if (data.trim() === "[DONE]") return "done";
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new AiProviderError("Workers AI sent a stream event that is not JSON");
  }
  if (typeof chunk !== "object" || chunk === null) throw new AiProviderError("Workers AI sent a stream event that is not an object");
  if ("choices" in chunk || "error" in chunk) return openAiPieces(data);
  const { response, usage } = chunk as { response?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null };
  const pieces: ReplyPiece[] = [];
  if (typeof response === "string" && response !== "") pieces.push({ text: response });
  if (typeof usage?.prompt_tokens === "number" && typeof usage.completion_tokens === "number") {
    pieces.push({ usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens } });
  }
  return pieces;
}

/** Workers AI through the Worker's `[ai]` binding: `run(model, {messages, stream: true})` answers with an SSE stream. */
export function workersAiProvider(binding: WorkersAiBinding, model: string): ChatProvider {
  return {
    name: "workers-ai",
    model,
    async *reply(prompt: readonly PromptMessage[], { maxTokens, signal }) {
      let output: unknown;
      try {
        output = await binding.run(model, { messages: prompt, stream: true, max_tokens: maxTokens });
      } catch (e) {
        throw new AiProviderError(`Workers AI refused the request: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!(output instanceof ReadableStream)) throw new AiProviderError("Workers AI did not stream its answer");
      for await (const message of sseMessages(output as ReadableStream<Uint8Array>, signal)) {
        const pieces = workersAiPieces(message.data);
        if (pieces === "done") return;
        yield* pieces;
      }
      throw new AiProviderError("Workers AI's stream ended before the answer was complete");
    },
  };
}
