import type { IRequest } from "itty-router";
import { z } from "zod";
import {
  CLOSE_CODES,
  commandProblem,
  EXECUTION_ID_PATTERN,
  EXECUTION_LANGUAGES,
  EXECUTION_LIMITS,
  EXECUTION_STATUSES,
  EXIT_CAUSES,
} from "../domain/executions";
import { executionState, openExecutionSocket, startExecution, type ExecutionState } from "../flows/executions.flow";
import { jsonContent, jsonResponse, SessionEndpoint, SocketEndpoint, type SessionContext, type SocketContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { socketAnswer, socketUrl } from "../http/sockets";
import { ownAttempt, visibleExecution } from "../http/visibility";
import { mintWsTicket } from "../http/ws-tickets";
import { AttemptIdParam, RepoPath } from "./params";
import type { RouteTable } from "./table";

const count = z.number().int();

const ExecutionIdParam = z.object({ execution_id: z.string().regex(EXECUTION_ID_PATTERN, "not an execution id") });

const LimitsSchema = z
  .object({
    timeout_seconds: count.describe("Wall clock of the program, from its start"),
    cpu_seconds: count,
    memory_mb: count,
    processes: count,
    output_bytes: count.describe("stdout and stderr together; beyond it a notice on stderr, and the program is stopped"),
    stdin_message_bytes: count,
    stdin_total_bytes: count,
  })
  .meta({ id: "ExecutionLimits" });

const ExitSchema = z
  .object({
    status: z.enum(["exited", "killed", "timed_out", "error"]),
    cause: z.enum(EXIT_CAUSES).nullable().describe("Why it was stopped; null when the program ended by itself"),
    code: count.nullable(),
    signal: z.string().nullable(),
    truncated: z.boolean().describe("True when output went over the limit and the rest was discarded"),
    detail: z.string().nullable(),
    timings: z.object({ setup_ms: count.nullable(), run_ms: count.nullable(), total_ms: count }),
  })
  .meta({ id: "ExecutionExit" });

const ExecutionSchema = z
  .object({
    execution_id: z.string(),
    status: z
      .enum(EXECUTION_STATUSES)
      .describe("starting → queued (a runner has it) → running → exited, killed, timed_out or error (final)"),
    language: z.enum(EXECUTION_LANGUAGES),
    file: z.string(),
    attempt_id: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    next_seq: count.describe("The seq the next output chunk will have; chunks kept for replay are 0 … next_seq - 1"),
    exit: ExitSchema.nullable(),
    limits: LimitsSchema,
    ws_url: z.string().describe("The execution's socket; add ?after_seq=N to replay only what came after chunk N"),
  })
  .meta({ id: "Execution" });

const TicketSchema = z
  .object({
    ws_ticket: z.string().describe("For browsers: `?ticket=` on ws_url; valid once, for 60 s"),
    ws_ticket_expires_at: z.string(),
  })
  .meta({ id: "ExecutionTicket" });

const limitsView = (timeoutSeconds: number): z.infer<typeof LimitsSchema> => ({
  timeout_seconds: timeoutSeconds,
  cpu_seconds: EXECUTION_LIMITS.cpuSeconds,
  memory_mb: EXECUTION_LIMITS.memoryMb,
  processes: EXECUTION_LIMITS.processes,
  output_bytes: EXECUTION_LIMITS.outputBytes,
  stdin_message_bytes: EXECUTION_LIMITS.stdinMessageBytes,
  stdin_total_bytes: EXECUTION_LIMITS.stdinTotalBytes,
});

const ticketResource = (executionId: string) => `code-execution:${executionId}`;

function executionView(request: IRequest, { row, summary }: ExecutionState): z.infer<typeof ExecutionSchema> {
  return {
    execution_id: row.id,
    status: summary.status,
    language: row.language,
    file: row.file,
    attempt_id: row.attemptId,
    created_at: summary.created_at,
    started_at: summary.started_at,
    ended_at: summary.ended_at,
    next_seq: summary.next_seq,
    exit: summary.exit,
    limits: limitsView(row.timeoutSeconds),
    ws_url: socketUrl(request, `/api/v1/code-execution/ws/${row.id}`),
  };
}

const executionNotFound = jsonResponse("No such execution, or one the caller may not see (someone else's, not of an attempt where the caller is staff)", ErrorSchema);

const ExecuteBody = z
  .strictObject({
    attempt_id: AttemptIdParam.shape.attempt_id
      .optional()
      .describe("Run in this attempt's workspace: the task's snapshot, its prepared dependencies and the saved changes"),
    language: z.enum(EXECUTION_LANGUAGES).describe("node runs `node <file>`, python runs `python3 <file>`"),
    file: RepoPath.describe("The program, relative to the workspace root (.js/.mjs/.cjs for node, .py for python)"),
    files: z
      .array(z.strictObject({ path: RepoPath, content: z.string().describe("UTF-8 text") }))
      .max(EXECUTION_LIMITS.files)
      .optional()
      .describe(`Without attempt_id: the whole workspace, at most ${EXECUTION_LIMITS.files} files and ${EXECUTION_LIMITS.filesBytes} bytes`),
    timeout_seconds: count
      .min(EXECUTION_LIMITS.timeoutSeconds.min)
      .max(EXECUTION_LIMITS.timeoutSeconds.max)
      .default(EXECUTION_LIMITS.timeoutSeconds.default)
      .describe("Wall clock of the program"),
  })
  .superRefine((body, ctx) => {
    const problem = commandProblem(body.language, body.file);
    if (problem) ctx.addIssue({ code: "custom", path: ["file"], message: problem });
    if (body.attempt_id !== undefined) {
      if (body.files !== undefined) {
        ctx.addIssue({ code: "custom", path: ["files"], message: "an execution in an attempt runs its saved changes; save files with PATCH /attempts/{attempt_id}/changes" });
      }
      return;
    }
    const files = body.files ?? [];
    if (!files.some((f) => f.path === body.file)) {
      ctx.addIssue({ code: "custom", path: ["files"], message: `without attempt_id, files must hold the program ${JSON.stringify(body.file)}` });
    }
    if (new Set(files.map((f) => f.path)).size !== files.length) ctx.addIssue({ code: "custom", path: ["files"], message: "a path appears twice" });
    const bytes = files.reduce((n, f) => n + new TextEncoder().encode(f.content).byteLength, 0);
    if (bytes > EXECUTION_LIMITS.filesBytes) {
      ctx.addIssue({ code: "custom", path: ["files"], message: `the files hold ${bytes} bytes; at most ${EXECUTION_LIMITS.filesBytes} may be sent` });
    }
  });

export class ExecuteCode extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["code-execution"],
    summary: "Start a live code execution",
    description:
      "Runs one program interactively in the sandbox (no network), in an attempt's workspace (the attempt's candidate, " +
      "while it is IN_PROGRESS) or free-standing with the files given. Then open ws_url: Bearer token, or the browser " +
      "ticket in `?ticket=`. Output is kept for replay from any seq until an hour after the end. " +
      `At most ${EXECUTION_LIMITS.perUser} live executions per user and ${EXECUTION_LIMITS.perAttempt} per attempt (429 with ` +
      "Retry-After). 503 when no sandbox runner took it (the execution is recorded as error). See docs/api.md, \"Live code execution\".",
    request: { body: jsonContent(ExecuteBody) },
    responses: {
      "201": jsonResponse("Started; the socket address, its browser ticket and the limits", ExecutionSchema.extend(TicketSchema.shape)),
      "403": jsonResponse("The attempt is not the caller's own", ErrorSchema),
      "404": jsonResponse("No such attempt, or one the caller may not see", ErrorSchema),
      "409": jsonResponse("The attempt is not in progress", ErrorSchema),
      "503": jsonResponse("No sandbox runner took the execution; retry after Retry-After", ErrorSchema),
    },
  };

  async run({ request, env, db, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const attempt = body.attempt_id === undefined ? null : await ownAttempt(db, caller, body.attempt_id);
    const started = unwrap(
      await startExecution(env, {
        userId: caller.user.id,
        language: body.language,
        file: body.file,
        timeoutSeconds: body.timeout_seconds,
        attempt,
        files: body.files ?? [],
      }),
    );
    if (!started.dispatched) {
      throw new HttpError(503, `${started.problem}. Execution ${started.id} ended in error.`, {
        "Retry-After": String(EXECUTION_LIMITS.retryAfterSeconds),
      });
    }
    const { execution } = started;
    const ticket = await mintWsTicket(env.URL_SIGNING_SECRET, caller.viewer, ticketResource(execution.row.id), EXECUTION_LIMITS.ticketSeconds);
    return json(
      { ...executionView(request, execution), ws_ticket: ticket.ticket, ws_ticket_expires_at: ticket.expiresAt },
      201,
      { "Cache-Control": "no-store" },
    );
  }
}

export class GetExecution extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["code-execution"],
    summary: "An execution's state, and its exit once ended",
    description: "For its owner, and staff of its attempt's organization.",
    request: { params: ExecutionIdParam },
    responses: { "200": jsonResponse("The execution", ExecutionSchema), "404": executionNotFound },
  };

  async run({ request, env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { execution } = await visibleExecution(db, caller.viewer, params.execution_id);
    return executionView(request, await executionState(env, execution));
  }
}

export class CreateExecutionTicket extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["code-execution"],
    summary: "A browser ticket for the execution's socket",
    description:
      "Browsers cannot send Authorization on a WebSocket: they get a ticket here with their Bearer token and open " +
      "`ws_url?ticket=…`. A ticket is for one socket of this execution, for its caller, once, within 60 s.",
    request: { params: ExecutionIdParam },
    responses: { "201": jsonResponse("The ticket", TicketSchema), "404": executionNotFound },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    await visibleExecution(db, caller.viewer, params.execution_id);
    const ticket = await mintWsTicket(env.URL_SIGNING_SECRET, caller.viewer, ticketResource(params.execution_id), EXECUTION_LIMITS.ticketSeconds);
    return json({ ws_ticket: ticket.ticket, ws_ticket_expires_at: ticket.expiresAt }, 201, { "Cache-Control": "no-store" });
  }
}

export class WatchExecution extends SocketEndpoint {
  schema = {
    tags: ["code-execution"],
    summary: "WebSocket: the execution's live stdout/stderr, stdin and terminate",
    description:
      "Upgrade with `Authorization: Bearer <session JWT>`, or from a browser with `?ticket=` (POST …/ws-ticket). " +
      "The owner may send `{\"type\":\"stdin\",\"data\":\"…\",\"eof\":false}` and `{\"type\":\"terminate\"}`; staff of the " +
      "attempt's organization only watch. The server sends `hello`, then `stdout`/`stderr` chunks `{type, seq, data}` " +
      "(replayed from `after_seq`+1), `status`, `error` `{detail}` for a refused message, and `exit` last, then closes " +
      `with ${CLOSE_CODES.ended}. Send \`{"type":"ping"}\` to keep a socket alive ({"type":"pong"} answers). ` +
      "Wrong user: 404, as for no such execution, before any socket is opened. See docs/api.md, \"Live code execution\".",
    request: {
      params: ExecutionIdParam,
      query: z.object({
        after_seq: count.min(-1).default(-1).describe("The last seq the client has; the replay starts after it"),
        ticket: z.string().optional().describe("Browser ticket instead of the Authorization header"),
      }),
    },
    responses: {
      "101": { description: "Switching to the WebSocket protocol" },
      "404": executionNotFound,
      "426": jsonResponse("Not a WebSocket upgrade request", ErrorSchema),
      "429": jsonResponse("Too many sockets on this execution, or rate limited", ErrorSchema),
    },
  };

  protected resource(request: IRequest): string {
    return ticketResource(String(request.params?.execution_id ?? ""));
  }

  async run({ env, db, credential }: SocketContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const { execution, role } = await visibleExecution(db, credential.viewer, params.execution_id);
    return socketAnswer(await openExecutionSocket(env, execution.id, { role, ticket: credential.ticket, afterSeq: query.after_seq }));
  }
}

export const codeExecutionRoutes: RouteTable = [
  ["POST", "/code-execution/execute", ExecuteCode],
  ["GET", "/code-execution/ws/:execution_id", WatchExecution],
  ["GET", "/code-execution/:execution_id", GetExecution],
  ["POST", "/code-execution/:execution_id/ws-ticket", CreateExecutionTicket],
];
