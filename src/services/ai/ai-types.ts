import type { AiProviderName, PromptMessage, TokenUsage } from "../../domain/ai-chat";

/** A piece of a streamed answer: text as it comes, and the token usage when the provider reports it. */
export type ReplyPiece = { text: string } | { usage: TokenUsage };

export interface ReplyOptions {
  maxTokens: number;
  /** Aborting stops reading the provider's stream; the reply then ends with an AiProviderError. */
  signal: AbortSignal;
}

/** One AI provider behind the chat (docs/api.md, "AI chat"): Workers AI, an OpenAI-compatible API, or the local stand-in. */
export interface ChatProvider {
  readonly name: AiProviderName;
  readonly model: string;
  /** The answer to `prompt` as the provider streams it; throws AiProviderError when it refuses or its stream breaks. */
  reply(prompt: readonly PromptMessage[], options: ReplyOptions): AsyncIterable<ReplyPiece>;
}

/** A provider failed; `message` says how, in words fit for the candidate and the transcript (never a credential). */
export class AiProviderError extends Error {}
