import { z } from "zod";
import { RunnerCallbackSchema } from "../domain/runner-callback";
import { RUNNER_JOB_STATUSES } from "../domain/runner-jobs";
import { jsonContent, jsonResponse, type RouteContext } from "../http/endpoint";
import { ErrorSchema, HttpError } from "../http/errors";
import { RunnerSignedEndpoint } from "../http/runner-endpoint";
import { recordRunnerResult } from "../services/runner/jobs";
import type { RouteTable } from "./table";

const RecordedSchema = z
  .object({
    job_id: z.string(),
    status: z.enum(RUNNER_JOB_STATUSES).describe("The job's status after this call"),
    recorded: z.boolean().describe("False when the job already had a final status: nothing changed"),
  })
  .meta({ id: "RunnerCallbackRecorded" });

export class PostRunnerCallback extends RunnerSignedEndpoint {
  schema = {
    tags: ["internal"],
    summary: "Internal: the sandbox runner reports a finished job",
    description:
      "Called only by the sandbox runner, signed with the shared secret (`X-Assay-Timestamp`, " +
      "`X-Assay-Signature: v1=<hex HMAC-SHA256 of \"<timestamp>.<raw body>\">`, docs/runner-protocol.md). " +
      "Idempotent: a repeated or late report for a finished job changes nothing and is answered 200.",
    request: { body: jsonContent(RunnerCallbackSchema) },
    responses: {
      "200": jsonResponse("Recorded now, or already final before", RecordedSchema),
      "401": jsonResponse("Missing, bad or stale signature; nothing was recorded", ErrorSchema),
      "404": jsonResponse("No such job", ErrorSchema),
      "409": jsonResponse("The job is of another kind", ErrorSchema),
    },
  };

  async run({ env }: RouteContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const outcome = await recordRunnerResult(env, body);
    if ("refused" in outcome) {
      throw outcome.refused === "unknown_job" ? HttpError.notFound(outcome.detail) : HttpError.conflict(outcome.detail);
    }
    return { job_id: body.job_id, status: outcome.status, recorded: outcome.recorded };
  }
}

export const internalRunnerRoutes: RouteTable = [["POST", "/internal/runner/callback", PostRunnerCallback]];
