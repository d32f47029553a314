import { backoffSeconds } from "../domain/backoff";
import type { Env } from "../env";
import { recordStartFailure, startScoringOrSayWhyNot } from "../flows/scoring/scoring-start.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";
import type { ScoringMessage } from "../domain/queue-messages";

export const SCORING_QUEUE = "scoring";
export const SCORING_DEAD_LETTERS = "scoring-dlq";

const common = {
  subject: "scoring",
  fields: (body: ScoringMessage) => ({ attempt_id: body.attempt_id }),
  retryDelaySeconds: (attempts: number) => backoffSeconds(attempts, 5, 300),
};

/** Consumer of `scoring`: starts scoring each submitted attempt (a re-score when asked). */
export function consumeScoring(batch: MessageBatch<ScoringMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      await startScoringOrSayWhyNot(env, message.body.attempt_id, message.body.rescore === true);
      message.ack();
    },
  });
}

/** Start messages that failed past the queue's retries: the attempt shows scoring failed, for an admin to re-score. */
export function consumeScoringDeadLetters(batch: MessageBatch<ScoringMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      log("error", "scoring: could not start", { attempt_id: message.body.attempt_id });
      await recordStartFailure(env, message.body.attempt_id, "Scoring could not be started; an admin can re-score.");
      message.ack();
    },
  });
}
