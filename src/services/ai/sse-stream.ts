import { SseParser, type SseMessage } from "../../domain/ai-chat";
import { AiProviderError } from "./ai-types";

/** The events of a provider's `text/event-stream` body; aborting `signal` cancels the body and ends them. */
export async function* sseMessages(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel(signal.reason).catch(() => undefined);
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel);
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        throw new AiProviderError(`the AI provider's stream broke: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (chunk.done) break;
      yield* parser.feed(decoder.decode(chunk.value, { stream: true }));
    }
    yield* parser.feed(decoder.decode());
    yield* parser.end();
  } finally {
    signal.removeEventListener("abort", cancel);
    // Also when the reader stops early: the provider's connection is not left open.
    await reader.cancel().catch(() => undefined);
  }
}
