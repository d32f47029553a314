import { database } from "../db/client";
import { latestScore } from "../db/scores.queries";
import type { AttemptAudience } from "../domain/attempts";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { candidateReport, candidateScoringReason, type CandidateReport, type ScoringStatus } from "../domain/score-views";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { Env } from "../env";

// An attempt's score as its audience may read it (docs/scoring.md), and scoring it again.

type Audience = Exclude<AttemptAudience, "none">;

export interface ScoringState {
  status: ScoringStatus;
  reason: string | null;
  score_id: string | null;
}

/** How scoring of an attempt stands, for the attempt's own view, as its audience may read it. */
export async function scoringState(env: Env, attemptId: string, audience: Audience): Promise<ScoringState> {
  const latest = await latestScore(database(env.DB), attemptId);
  if (!latest) return { status: "not_submitted", reason: null, score_id: null };
  const reason = audience === "staff" ? latest.reason : candidateScoringReason(latest.status, latest.reason);
  return { status: latest.status, reason, score_id: latest.status === "scored" ? latest.id : null };
}

type ReportAdditions = { explanation: string | null; created_at: string; completed_at: string };
export type ScoreReportView = ({ view: "staff" } & Record<string, unknown> & ReportAdditions) | ({ view: "candidate" } & CandidateReport & ReportAdditions);

/**
 * The attempt's finished score report, whole for staff and without the hidden tests for its
 * candidate, with the candidate's explanation (their own words, so both views have it); not
 * found until scoring has finished, saying why in the audience's words.
 */
export async function scoreReportView(env: Env, attemptId: string, audience: Audience): Promise<Outcome<ScoreReportView>> {
  const score = await latestScore(database(env.DB), attemptId);
  if (score?.status !== "scored" || !score.report || !score.completedAt) {
    const why = !score
      ? "the attempt has not been submitted"
      : score.status === "failed"
        ? `scoring failed: ${audience === "staff" ? score.reason : candidateScoringReason("failed", score.reason)}`
        : "scoring is in progress";
    return refuse("not_found", `The score report of attempt ${attemptId} is not available: ${why}`);
  }
  // Read once the report exists: the polls before it do not wake the attempt's object.
  const explanation = await attemptObject(env, attemptId).submittedExplanation();
  const additions = { explanation, created_at: score.createdAt, completed_at: score.completedAt };
  if (audience === "staff") return accept({ view: "staff", ...score.report, ...additions });
  return accept({ view: "candidate", ...candidateReport(score.report), ...additions });
}

/**
 * Queues a new scoring of a submitted attempt under the current rubric; a conflict while the
 * attempt is not submitted or is being scored now. Answers the state scoring is in from here.
 */
export async function rescore(
  env: Env,
  attempt: { id: string; status: string },
  audience: Audience,
): Promise<Outcome<ScoringState>> {
  if (attempt.status !== "SUBMITTED" && attempt.status !== "SCORED") {
    return refuse("conflict", `Attempt ${attempt.id} is ${attempt.status}; only a submitted attempt is scored`);
  }
  const state = await scoringState(env, attempt.id, audience);
  if (state.status === "scoring") return refuse("conflict", `Attempt ${attempt.id} is being scored now; wait for it to finish`);
  await env.SCORING.send({ attempt_id: attempt.id, rescore: true });
  return accept({ status: "scoring", reason: null, score_id: state.score_id });
}
