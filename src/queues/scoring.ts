import type { ScoringMessage } from "../domain/attempts";
import { backoffSeconds } from "../domain/backoff";
import type { Env } from "../env";
import { recordStartFailure, ScoringStartError, startScoring } from "../services/scoring/start";
import { log } from "../services/log";

export const SCORING_QUEUE = "scoring";
export const SCORING_DEAD_LETTERS = "scoring-dlq";


/** Consumer of `scoring`: starts scoring each submitted attempt (a re-score when asked). */
export async function consumeScoring(batch: MessageBatch<ScoringMessage>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        await startScoring(env, message.body.attempt_id, message.body.rescore === true);
        message.ack();
      } catch (e) {
        if (e instanceof ScoringStartError) {
          await recordStartFailure(env, message.body.attempt_id, `Scoring could not be started: ${e.message}.`);
          message.ack();
          return;
        }
        log("warn", "scoring: start failed, retrying", { attempt_id: message.body.attempt_id, attempt: message.attempts, error: String(e) });
        message.retry({ delaySeconds: backoffSeconds(message.attempts, 5, 300) });
      }
    }),
  );
}

/** Start messages that failed past the queue's retries: the attempt shows scoring failed, for an admin to re-score. */
export async function consumeScoringDeadLetters(batch: MessageBatch<ScoringMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    log("error", "scoring: could not start", { attempt_id: message.body.attempt_id });
    await recordStartFailure(env, message.body.attempt_id, "Scoring could not be started; an admin can re-score.");
    message.ack();
  }
}
