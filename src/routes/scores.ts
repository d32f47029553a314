import { z } from "zod";
import { database } from "../db/client";
import { latestScore } from "../db/scores";
import { candidateReport, candidateScoringReason } from "../domain/score-views";
import { RUBRIC_VERSION, SUBSCORES } from "../domain/scoring";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { visibleAttempt } from "../http/visibility";
import { AttemptIdParam } from "./params";
import { ScoringStateSchema, scoringState } from "./scoring-state";
import type { RouteTable } from "./table";

const Subscores = z.object(Object.fromEntries(SUBSCORES.map((n) => [n, z.number().min(0).max(100)])) as Record<(typeof SUBSCORES)[number], z.ZodNumber>);
const Evidence = z.record(z.string(), z.unknown());
const TestCounts = z.object({ passed: z.number().int(), total: z.number().int() });

/** What both views of a report have: the scores, their weights, and the client's figures beside the measured ones. */
const reportCommon = {
  score_id: z.string(),
  attempt_id: z.string(),
  task_id: z.string(),
  rubric_version: z.string().describe("The rubric the report was computed with (docs/scoring.md)"),
  overall_score: z.number().min(0).max(100).describe("Weighted mean of the subscores"),
  subscores: Subscores.describe("Each 0–100"),
  weights: Subscores.describe("Weight of each subscore in overall_score"),
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
  created_at: z.string(),
  completed_at: z.string(),
};

export const ScoreReportSchema = z
  .object({
    view: z.literal("staff").describe("The staff's view: everything the report holds"),
    ...reportCommon,
    evidence: z
      .record(z.string(), Evidence)
      .describe("What each subscore was computed from, the hidden tests that failed (by id) included"),
    flags: z.array(z.string()).describe("Points for the reviewer"),
    ignored_test_edits: z.array(z.string()).describe("The task's test files the candidate changed; those changes were not scored"),
    excluded_from_hidden_run: z
      .array(z.string())
      .optional()
      .describe("Overlay paths the hidden-test run left at the task's version (reports made since hidden tests are matched by file)"),
  })
  .meta({ id: "ScoreReport" });

export const CandidateScoreReportSchema = z
  .object({
    view: z.literal("candidate").describe("The candidate's view (docs/scoring.md, \"What candidates see\")"),
    ...reportCommon,
    evidence: z
      .object({
        correctness: z
          .object({
            run_status: z.string().nullable().describe("How the hidden-test run ended"),
            fail_to_pass: TestCounts.nullable().describe("Hidden tests the task's change makes pass: how many of them pass"),
            pass_to_pass: TestCounts.nullable().describe("Hidden tests that passed before the change: how many still pass"),
            tampered: z.boolean().optional().describe("Present when the run was checked: whether it was found tampered with"),
          })
          .describe("Counts only: never which hidden tests failed, their files or the reasons that name them"),
        test_coverage: Evidence,
        code_quality: Evidence,
        behavior: Evidence,
        communication: Evidence,
      })
      .describe("The evidence about the candidate's own work; the hidden tests only as counts"),
  })
  .meta({ id: "CandidateScoreReport" });

export class GetScoreReport extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["scores"],
    summary: "The attempt's score report; 404 until scoring has finished",
    description:
      "The attempt's candidate and the staff of its organization. Scoring runs asynchronously after submission: poll " +
      "with backoff (e.g. 1 s doubling to 10 s) until this stops answering 404, or until the attempt's score_id is set. " +
      "Staff get the whole report (`view: staff`); the candidate gets the scores, weights, claims and the evidence about " +
      "their own work, with the hidden tests only as counts (`view: candidate`): never their names, files, the test " +
      "patch or the solution.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The report, as the caller may see it", z.discriminatedUnion("view", [ScoreReportSchema, CandidateScoreReportSchema])),
      "404": jsonResponse("No such attempt, or scoring has not finished", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const { audience } = await visibleAttempt(db, caller, params.attempt_id);
    const score = await latestScore(db, params.attempt_id);
    if (score?.status !== "scored" || !score.report || !score.completedAt) {
      const why = !score
        ? "the attempt has not been submitted"
        : score.status === "failed"
          ? `scoring failed: ${audience === "staff" ? score.reason : candidateScoringReason("failed", score.reason)}`
          : "scoring is in progress";
      throw HttpError.notFound(`The score report of attempt ${params.attempt_id} is not available: ${why}`);
    }
    const times = { created_at: score.createdAt, completed_at: score.completedAt };
    if (audience === "staff") return { view: "staff", ...score.report, ...times };
    return { view: "candidate", ...candidateReport(score.report), ...times };
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
    const { attempt, audience } = await visibleAttempt(db, caller, params.attempt_id);
    await caller.requireMember(attempt.organizationId, "orgadmin");
    if (attempt.status !== "SUBMITTED" && attempt.status !== "SCORED") {
      throw HttpError.conflict(`Attempt ${attempt.id} is ${attempt.status}; only a submitted attempt is scored`);
    }
    const state = await scoringState(db, attempt.id, audience);
    if (state.status === "scoring") throw HttpError.conflict(`Attempt ${attempt.id} is being scored now; wait for it to finish`);
    await env.SCORING.send({ attempt_id: attempt.id, rescore: true });
    return json({ status: "scoring", reason: null, score_id: state.score_id }, 202);
  }
}

export const scoreRoutes: RouteTable = [
  ["GET", "/attempts/:attempt_id/score-report", GetScoreReport],
  ["POST", "/attempts/:attempt_id/rescore", Rescore],
];
