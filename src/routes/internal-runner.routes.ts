import { z } from "zod";
import { callbackSchema } from "../../protocol/callback";
import { leasesAnswerSchema, leasesSchema } from "../../protocol/leases";
import { RUNNER_BACKLOG_ROUTE } from "../domain/runner-backlog";
import { RUNNER_JOB_KINDS, RUNNER_JOB_PRIORITIES, RUNNER_JOB_STATUSES } from "../domain/runner-jobs";
import type { OpenAPIRouteSchema } from "chanfana";
import { EXECUTION_ID_PATTERN } from "../domain/executions";
import { joinExecutionAsRunner, reportRunnerResult, runnerDialInNonce, runnerHeartbeat } from "../flows/runner.flow";
import { runnerBacklogFor, runnerBacklogUnavailable } from "../flows/runner-backlog.flow";
import { log } from "../lib/log";
import { bearerToken } from "../http/auth";
import { jsonContent, jsonResponse, PublicEndpoint, type RouteContext } from "../http/endpoint";
import { ErrorSchema, HttpError } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { RunnerSignedEndpoint } from "../http/runner-endpoint";
import { requireUpgrade, socketAnswer } from "../http/sockets";
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
    request: { body: jsonContent(callbackSchema) },
    responses: {
      "200": jsonResponse("Recorded now, or already final before", RecordedSchema),
      "401": jsonResponse("Missing, bad or stale signature; nothing was recorded", ErrorSchema),
      "404": jsonResponse("No such job", ErrorSchema),
      "409": jsonResponse("The job is of another kind", ErrorSchema),
    },
  };

  async run({ env, exec }: RouteContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const { status, recorded } = unwrap(await reportRunnerResult(env, exec, body));
    return { job_id: body.job_id, status, recorded };
  }
}

export class PostRunnerLeases extends RunnerSignedEndpoint {
  schema = {
    tags: ["internal"],
    summary: "Internal: a sandbox runner's heartbeat for the jobs it holds",
    description:
      "Called only by sandbox runners, signed like the callback (docs/runner-protocol.md, \"Leases\"). Renews the " +
      "leases of the jobs the runner still holds, hands back the ones it lists as released, and requeues every job " +
      "whose lease ran out, so a job on a runner that stopped is offered to another.",
    request: { body: jsonContent(leasesSchema) },
    responses: {
      "200": jsonResponse("Leases renewed", leasesAnswerSchema),
      "401": jsonResponse("Missing, bad or stale signature; nothing changed", ErrorSchema),
    },
  };

  async run({ env }: RouteContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    return runnerHeartbeat(env, body.runner_id, body.held, body.released);
  }
}

export class RunnerExecutionSocket extends PublicEndpoint {
  schema = {
    tags: ["internal"],
    summary: "Internal: the sandbox runner dials in to a live execution (WebSocket)",
    description:
      "Only the runner that was handed the execution, with `Authorization: Bearer <connect.token>` from the job " +
      "(docs/runner-protocol.md, \"The runner's dial-in\"). The token is signed, expires with the connect window and " +
      "is taken once: a second dial-in is 409, one after the execution ended 410.",
    request: { params: z.object({ execution_id: z.string().regex(EXECUTION_ID_PATTERN, "not an execution id") }) },
    responses: {
      "101": { description: "Switching to the WebSocket protocol" },
      "401": jsonResponse("Missing, forged or expired connect token", ErrorSchema),
      "404": jsonResponse("No such execution", ErrorSchema),
      "409": jsonResponse("A runner has already joined", ErrorSchema),
      "410": jsonResponse("The execution has ended", ErrorSchema),
      "426": jsonResponse("Not a WebSocket upgrade request", ErrorSchema),
    },
  };

  // Not rate-limited per IP (src/domain/rate-scopes.ts), so the document promises no 429.
  override getSchema(): OpenAPIRouteSchema {
    const schema = super.getSchema();
    delete schema.responses?.["429"];
    return schema;
  }

  async run({ request, env }: RouteContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const token = bearerToken(request);
    if (!token) throw HttpError.unauthorized("The runner dials in with 'Authorization: Bearer <connect token>'");
    const nonce = unwrap(await runnerDialInNonce(env, params.execution_id, token));
    requireUpgrade(request);
    return socketAnswer(await joinExecutionAsRunner(env, params.execution_id, nonce));
  }
}

const jobCounts = <K extends string>(keys: readonly K[], what: string) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.number().int().min(0).describe(`${what} ${k}`)])) as Record<K, z.ZodNumber>);

const RunnerBacklogSchema = z
  .object({
    total: z
      .number()
      .int()
      .min(0)
      .describe("Jobs the runner fleet is asked to serve now: queued plus dispatched. The autoscaler's metric (KEDA metrics-api `valueLocation: total`)"),
    queued: jobCounts(RUNNER_JOB_KINDS, "Queued jobs of kind")
      .extend({ total: z.number().int().min(0).describe("Queued jobs of every kind") })
      .describe("Jobs waiting for a runner to take them, by kind"),
    queued_by_priority: jobCounts(RUNNER_JOB_PRIORITIES, "Queued jobs of priority").describe("The same queued jobs by the priority the runner's pool serves them in"),
    dispatched: z.number().int().min(0).describe("Jobs a runner has taken and not yet finished (running, waiting in its pool, or reporting)"),
    oldest_queued_age_seconds: z.number().int().min(0).describe("Seconds since the oldest queued job was created (a requeued job counts from its creation); 0 when none is queued"),
  })
  .meta({ id: "RunnerBacklog" });

export class GetRunnerBacklog extends PublicEndpoint {
  schema = {
    tags: ["internal"],
    summary: "Internal: the runner jobs waiting and in flight, for the fleet's autoscaler",
    description:
      "Called by the runner fleet's autoscaler (KEDA's metrics-api scaler, deploy/kubernetes/), with " +
      "`Authorization: Bearer <RUNNER_BACKLOG_TOKEN>`: a read-only token of its own, compared in constant time; the " +
      "runners' signing key is never accepted in its place (docs/runner-protocol.md, \"The backlog\"). Nothing is read " +
      "before the token is checked. Not rate-limited per IP.",
    responses: {
      "200": jsonResponse("The backlog now", RunnerBacklogSchema),
      "401": jsonResponse("Missing or wrong token", ErrorSchema),
      "503": jsonResponse("No usable RUNNER_BACKLOG_TOKEN is configured (unset, shorter than 16 characters, or the runner's secret)", ErrorSchema),
    },
  };

  // Not rate-limited per IP (src/domain/rate-scopes.ts), so the document promises no 429.
  override getSchema(): OpenAPIRouteSchema {
    const schema = super.getSchema();
    delete schema.responses?.["429"];
    return schema;
  }

  async run({ request, env }: RouteContext) {
    const problem = runnerBacklogUnavailable(env);
    if (problem) {
      // Why is for the operator's log: told to anyone, "the token is the runner's signing key"
      // would say what a leaked backlog token also opens.
      log("warn", "runner backlog refused: no usable token", { problem });
      throw new HttpError(503, "The runner backlog is not configured on this server; its log says why");
    }
    const token = bearerToken(request);
    if (!token) throw HttpError.unauthorized("The backlog needs 'Authorization: Bearer <RUNNER_BACKLOG_TOKEN>'");
    return unwrap(await runnerBacklogFor(env, token));
  }
}

export const internalRunnerRoutes: RouteTable = [
  ["POST", "/internal/runner/callback", PostRunnerCallback],
  ["POST", "/internal/runner/leases", PostRunnerLeases],
  ["GET", RUNNER_BACKLOG_ROUTE, GetRunnerBacklog],
  ["GET", "/internal/runner/executions/:execution_id/ws", RunnerExecutionSocket],
];
