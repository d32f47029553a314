import { z } from "zod";
import type { Database } from "../db/client";
import { latestScore } from "../db/scores";
import type { AttemptAudience } from "../domain/attempts";
import { candidateScoringReason } from "../domain/score-views";

export const ScoringStateSchema = z
  .object({
    status: z.enum(["not_submitted", "scoring", "scored", "failed"]),
    reason: z
      .string()
      .nullable()
      .describe(
        "Why scoring failed, or the last runner trouble while it retries. Staff get the runner's words; the candidate a " +
          "general sentence, since those words may name the hidden test files",
      ),
    score_id: z.string().nullable(),
  })
  .meta({ id: "ScoringState" });

/** How scoring of an attempt stands, for the attempt's own view, as its audience may read it. */
export async function scoringState(
  db: Database,
  attemptId: string,
  audience: Exclude<AttemptAudience, "none">,
): Promise<z.infer<typeof ScoringStateSchema>> {
  const latest = await latestScore(db, attemptId);
  if (!latest) return { status: "not_submitted", reason: null, score_id: null };
  const reason = audience === "staff" ? latest.reason : candidateScoringReason(latest.status, latest.reason);
  return { status: latest.status, reason, score_id: latest.status === "scored" ? latest.id : null };
}
