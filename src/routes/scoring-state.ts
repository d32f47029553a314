import { z } from "zod";
import type { Database } from "../db/client";
import { latestScore } from "../db/scores";

export const ScoringStateSchema = z
  .object({
    status: z.enum(["not_submitted", "scoring", "scored", "failed"]),
    reason: z.string().nullable().describe("Why scoring failed, or the last runner trouble while it retries"),
    score_id: z.string().nullable(),
  })
  .meta({ id: "ScoringState" });

/** How scoring of an attempt stands, for the attempt's own view. */
export async function scoringState(db: Database, attemptId: string): Promise<z.infer<typeof ScoringStateSchema>> {
  const latest = await latestScore(db, attemptId);
  if (!latest) return { status: "not_submitted", reason: null, score_id: null };
  return { status: latest.status, reason: latest.reason, score_id: latest.status === "scored" ? latest.id : null };
}
