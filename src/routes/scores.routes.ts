import { z } from "zod";
import { RUBRIC_VERSION } from "../domain/scoring";
import { rescore, scoreReportView } from "../flows/scores.flow";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { visibleAttempt } from "../http/visibility";
import { AttemptIdParam } from "./params";
import { CandidateScoreReportSchema, ScoreReportSchema, ScoringStateSchema } from "./schemas";
import type { RouteTable } from "./table";

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

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { audience } = await visibleAttempt(db, caller, params.attempt_id);
    return unwrap(await scoreReportView(env, params.attempt_id, audience));
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

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt, audience } = await visibleAttempt(db, caller, params.attempt_id);
    await caller.requireMember(attempt.organizationId, "orgadmin");
    return json(unwrap(await rescore(env, attempt, audience)), 202);
  }
}

export const scoreRoutes: RouteTable = [
  ["GET", "/attempts/:attempt_id/score-report", GetScoreReport],
  ["POST", "/attempts/:attempt_id/rescore", Rescore],
];
