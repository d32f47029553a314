import type { PromptMessage } from "../../domain/ai-chat";
import { sseMessages } from "./sse-stream";
import { AiProviderError, type ChatProvider, type ReplyPiece } from "./ai-types";

/**
 * The pieces of one `data:` of an OpenAI-compatible chat completion stream: text deltas of the
 * first choice, and usage (sent last when asked for with `stream_options.include_usage`).
 * "done" for the closing `[DONE]`; an `error` object, or data that is not JSON, is an AiProviderError.
 */
export function openAiPieces(data: string): ReplyPiece[] | "done" {
  if (data.trim() === "[DONE]") return "done";
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new AiProviderError("the AI provider sent a stream event that is not JSON");
  }
  if (typeof chunk !== "object" || chunk === null) throw new AiProviderError("the AI provider sent a stream event that is not an object");
  const { choices, usage, error } = chunk as { choices?: unknown; usage?: unknown; error?: unknown };
  if (error !== undefined && error !== null) {
    const message = typeof error === "object" && "message" in error ? String(error.message) : String(error);
    throw new AiProviderError(`the AI provider reported an error: ${message.slice(0, 300)}`);
  }
  const pieces: ReplyPiece[] = [];
  const first = Array.isArray(choices) ? (choices[0] as { delta?: { content?: unknown } } | undefined) : undefined;
  const text = first?.delta?.content;
  if (typeof text === "string" && text !== "") pieces.push({ text });
  const counts = usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
  if (typeof counts?.prompt_tokens === "number" && typeof counts.completion_tokens === "number") {
    pieces.push({ usage: { prompt_tokens: counts.prompt_tokens, completion_tokens: counts.completion_tokens } });
  }
  return pieces;
}

export interface OpenAiOptions {
  /** The API's base, e.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/chat/completions`. */
  baseUrl: string;
  /** Sent as a Bearer token; local servers may need none. */
  apiKey?: string;
  model: string;
}

/** An OpenAI-compatible `/chat/completions` endpoint, streamed (OpenAI, vLLM, llama.cpp, Ollama, gateways). */
export function openAiProvider(options: OpenAiOptions): ChatProvider {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return {
    name: "openai",
    model: options.model,
    async *reply(prompt: readonly PromptMessage[], { maxTokens, signal }) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            ...(options.apiKey && { authorization: `Bearer ${options.apiKey}` }),
          },
          body: JSON.stringify({
            model: options.model,
            messages: prompt,
            stream: true,
            stream_options: { include_usage: true },
            max_tokens: maxTokens,
          }),
          signal,
        });
      } catch (e) {
        throw new AiProviderError(`the AI provider could not be reached: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!response.ok || !response.body) {
        // The provider's words may name the account or the key: only the status reaches the candidate and the transcript.
        await response.body?.cancel().catch(() => undefined);
        throw new AiProviderError(`the AI provider answered HTTP ${response.status}`);
      }
      for await (const message of sseMessages(response.body, signal)) {
        const pieces = openAiPieces(message.data);
        if (pieces === "done") return;
        yield* pieces;
      }
      throw new AiProviderError("the AI provider's stream ended before the answer was complete");
    },
  };
}
