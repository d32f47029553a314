import { z } from "zod";
import { TELEMETRY_LIMITS, TelemetryEventsSchema } from "../domain/telemetry";
import { ingestTelemetry, type TelemetrySender } from "../flows/telemetry.flow";
import { IdeSession, type Caller } from "../http/auth";
import { IdeSessionEndpoint, jsonContent, jsonResponse, type IdeSessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { ownAttempt } from "../http/visibility";
import { AttemptIdParam, attemptNotFound } from "./params";
import type { RouteTable } from "./table";

const { eventsPerBatch, batchBytes, batchesPerMinute, graceAfterSubmitMs } = TELEMETRY_LIMITS;

const TelemetryBatchSchema = z.strictObject({
  attempt_id: AttemptIdParam.shape.attempt_id
    .optional()
    .describe("The attempt; required with a session token, optional with an IDE session token (whose own attempt it must be)"),
  events: TelemetryEventsSchema.describe(`1–${eventsPerBatch} events, each with an event_id unique in the batch`),
});

const TelemetryRefusedSchema = z
  .object({
    index: z.int().describe("Position of the event in the batch's `events`, from 0"),
    event_id: z.string(),
    loc: z.array(z.union([z.string(), z.number()])).describe('The field, as a 422 would name it: ["body", "events", index, "file_path"]'),
    msg: z.string(),
    type: z.string().describe("unknown_file or unknown_run"),
  })
  .meta({ id: "TelemetryRefusedEvent" });

const TelemetryAcceptedSchema = z
  .object({
    attempt_id: z.string(),
    accepted: z
      .int()
      .describe("Events queued for storage. Events the service already has count here too: each is stored once, by attempt and event_id"),
    ignored: z.int().describe("Events dropped because they happened after the attempt was submitted; do not re-send them"),
    refused: z
      .array(TelemetryRefusedSchema)
      .describe("Events not stored because they name a file or run that is not the attempt's; the others are queued. Do not re-send them"),
  })
  .meta({ id: "TelemetryAccepted" });

/** Whose batch it is: an IDE session's attempt, or the attempt its candidate names (a 422 without one). */
async function sender(db: IdeSessionContext["db"], principal: Caller | IdeSession, requested: string | undefined): Promise<TelemetrySender> {
  if (principal instanceof IdeSession) return { kind: "ide", attemptId: principal.attemptFor(requested) };
  if (requested === undefined) {
    throw HttpError.invalid([
      { loc: ["body", "attempt_id"], msg: "Required with a session token: the attempt the events belong to", type: "invalid_type" },
    ]);
  }
  const { id, organizationId, taskId, submittedAt } = await ownAttempt(db, principal, requested);
  return { kind: "candidate", attempt: { id, organizationId, taskId, submittedAt } };
}

export class PostTelemetryBatch extends IdeSessionEndpoint {
  protected readonly role = "candidate";
  protected override readonly attemptIn = "body";
  protected override readonly maxBodyBytes = batchBytes;
  schema = {
    tags: ["telemetry"],
    summary: "Send a batch of IDE activity events (metadata only)",
    description:
      "With an IDE session token (attempt_id may be left out; if given it must be the token's attempt, else 401), or the " +
      "attempt's candidate's session token with attempt_id (staff of the attempt's organization: 403; anyone else: 404). " +
      "Events are activity metadata from a fixed catalogue (discriminated on `kind`): sizes, counts, durations and short " +
      "identifiers. Every event type is strict: a field outside the catalogue (text, clipboard, content, code, ...) is a 422 " +
      `whose loc names it. At most ${eventsPerBatch} events and ${batchBytes / 1024} KiB per batch (413 over it), ` +
      `${batchesPerMinute} batches per minute per attempt (429). Taken while the attempt is NOT_STARTED or IN_PROGRESS, and ` +
      `for ${graceAfterSubmitMs / 60_000} minutes after submission for events from before it; otherwise 409. ` +
      "A `file_path` must be a file of the attempt (its task's files or its saved changes) and a `run_id` one of its runs, " +
      "since anything else written there is free text: such an event alone is refused (listed in `refused`, with its index " +
      "and an `unknown_file` / `unknown_run` entry in the 422 style) and the rest of the batch is taken. " +
      "202 once queued; events are stored asynchronously, each once per (attempt, event_id), so re-sending a batch is safe.",
    request: { body: jsonContent(TelemetryBatchSchema) },
    responses: {
      "202": jsonResponse("Queued for storage, but for the events listed in `refused`", TelemetryAcceptedSchema),
      "404": attemptNotFound,
      "409": jsonResponse("The attempt was submitted too long ago, or every event is from after its submission", ErrorSchema),
    },
  };

  async run({ env, db, principal }: IdeSessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const from = await sender(db, principal, body.attempt_id);
    return json(unwrap(await ingestTelemetry(env, from, body.events, Date.now())), 202);
  }
}

export const telemetryRoutes: RouteTable = [["POST", "/siem/events/batch", PostTelemetryBatch]];
