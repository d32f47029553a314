import { z } from "zod";
import { findVisibleAttempt } from "../db/attempts";
import { database } from "../db/client";
import { latestScore } from "../db/scores";
import { RUBRIC_VERSION, SUBSCORES } from "../domain/scoring";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { AttemptIdParam } from "./attempts";
import { ScoringStateSchema, scoringState } from "./scoring-state";
import type { RouteTable } from "./table";

const Subscores = z.object(Object.fromEntries(SUBSCORES.map((n) => [n, z.number().min(0).max(100)])) as Record<(typeof SUBSCORES)[number], z.ZodNumber>);

export const ScoreReportSchema = z
  .object({
    score_id: z.string(),
    attempt_id: z.string(),
    task_id: z.string(),
    rubric_version: z.string().describe("The rubric the report was computed with (docs/scoring.md)"),
    overall_score: z.number().min(0).max(100).describe("Weighted mean of the subscores"),
    subscores: Subscores.describe("Each 0–100"),
    weights: Subscores.describe("Weight of each subscore in overall_score"),
    evidence: z.record(z.string(), z.record(z.string(), z.unknown())).describe("What each subscore was computed from"),
    claims: z
      .array(
        z.object({
          figure: z.string(),
          claimed: z.number().nullable(),
          measured: z.number().nullable(),
          gap: z.number().nullable(),
          flagged: z.boolean(),
        }),
      )
      .describe("The client's figures beside the measured ones; a gap over 0.25 is flagged"),
    flags: z.array(z.string()).describe("Points for the reviewer"),
    ignored_test_edits: z.array(z.string()).describe("The task's test files the candidate changed; those changes were not scored"),
    created_at: z.string(),
    completed_at: z.string(),
  })
  .meta({ id: "ScoreReport" });

export class GetScoreReport extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["scores"],
    summary: "The attempt's score report; 404 until scoring has finished",
    description:
      "The attempt's candidate and the staff of its organization. Scoring runs asynchronously after submission: poll " +
      "with backoff (e.g. 1 s doubling to 10 s) until this stops answering 404, or until the attempt's score_id is set.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The report", ScoreReportSchema),
      "404": jsonResponse("No such attempt, or scoring has not finished", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    await findVisibleAttempt(db, caller, params.attempt_id);
    const score = await latestScore(db, params.attempt_id);
    if (score?.status !== "scored" || !score.report || !score.completedAt) {
      const why = !score
        ? "the attempt has not been submitted"
        : score.status === "failed"
          ? `scoring failed: ${score.reason}`
          : "scoring is in progress";
      throw HttpError.notFound(`The score report of attempt ${params.attempt_id} is not available: ${why}`);
    }
    return { ...score.report, created_at: score.createdAt, completed_at: score.completedAt };
  }
}

export class Rescore extends SessionEndpoint {
  protected readonly role = "orgadmin";
  schema = {
    tags: ["scores"],
    summary: "Score a submitted attempt again (orgadmin of its organization)",
    description:
      `A new report under the current rubric (${RUBRIC_VERSION}); the attempt's score_id moves to it when it is done. ` +
      "The remedy for a scoring that failed after its retries.",
    request: { params: AttemptIdParam },
    responses: {
      "202": jsonResponse("Scoring queued", ScoringStateSchema),
      "409": jsonResponse("The attempt is not submitted, or is being scored now", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const { attempt } = await findVisibleAttempt(db, caller, params.attempt_id);
    await caller.requireMember(attempt.organizationId, "orgadmin");
    if (attempt.status !== "SUBMITTED" && attempt.status !== "SCORED") {
      throw HttpError.conflict(`Attempt ${attempt.id} is ${attempt.status}; only a submitted attempt is scored`);
    }
    const state = await scoringState(db, attempt.id);
    if (state.status === "scoring") throw HttpError.conflict(`Attempt ${attempt.id} is being scored now; wait for it to finish`);
    await env.SCORING.send({ attempt_id: attempt.id, rescore: true });
    return json({ status: "scoring", reason: null, score_id: state.score_id }, 202);
  }
}

export const scoreRoutes: RouteTable = [
  ["GET", "/attempts/:attempt_id/score-report", GetScoreReport],
  ["POST", "/attempts/:attempt_id/rescore", Rescore],
];
