import { backoffSeconds } from "../domain/backoff";
import type { SimilarityMessage } from "../domain/queue-messages";
import type { Env } from "../env";
import { computeSimilarity } from "../flows/similarity.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";

export const SIMILARITY_QUEUE = "similarity";
export const SIMILARITY_DEAD_LETTERS = "similarity-dlq";

const common = {
  subject: "similarity",
  fields: (body: SimilarityMessage) => ({ attempt_id: body.attempt_id }),
  retryDelaySeconds: (attempts: number) => backoffSeconds(attempts, 10, 300),
};

/** Consumer of `similarity`: compares each submitted attempt; one compared already is skipped, so a redelivery is harmless. */
export function consumeSimilarity(batch: MessageBatch<SimilarityMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      await computeSimilarity(env, message.body.attempt_id);
      message.ack();
    },
  });
}

/**
 * Consumer of `similarity-dlq`: comparisons that kept failing (D1 or an attempt's object
 * unreachable), tried again later and slower. When these retries run out too the attempt's
 * similarity stays `pending`, and the log names it.
 */
export function consumeSimilarityDeadLetters(batch: MessageBatch<SimilarityMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    retryDelaySeconds: () => 60,
    async handle(message) {
      log("warn", "similarity: dead letter, comparing late", { attempt_id: message.body.attempt_id, attempts: message.attempts });
      await computeSimilarity(env, message.body.attempt_id);
      message.ack();
    },
  });
}
