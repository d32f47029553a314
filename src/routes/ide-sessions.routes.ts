import { z } from "zod";
import { IDE_SESSION_LIMITS, IDE_TOKEN_PATTERN } from "../domain/ide-sessions";
import { openIdeSession, revokeIdeSession } from "../flows/ide-sessions.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { ownAttempt } from "../http/visibility";
import { AttemptIdParam, attemptNotFound } from "./params";
import type { RouteTable } from "./table";

const IdeSessionSchema = z
  .object({
    attempt_id: z.string(),
    session_token: z.string().describe("`assay_ide_` + 256 random bits, base64url; shown only here"),
    session_link: z.string().describe("assay://attempts/{attempt_id}?token={session_token}: opens the attempt in the IDE"),
    web_link: z
      .string()
      .describe("{APP_BASE_URL}/ide#attempt={attempt_id}&token={session_token}: opens the attempt in the web app (the token in the fragment, never sent to a server)"),
    expires_at: z.string(),
    active_sessions: z.number().int().describe(`Active tokens of the attempt, this one included (at most ${IDE_SESSION_LIMITS.maxActive})`),
  })
  .meta({ id: "IdeSession" });

export class CreateIdeSession extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Create an IDE session token for the attempt",
    description:
      "By the attempt's candidate, before it is submitted. The token is a Bearer credential for this attempt's " +
      "start and submit (and the IDE's telemetry), and nothing else. The service keeps only its SHA-256. " +
      `At most ${IDE_SESSION_LIMITS.maxActive} active (unexpired, unrevoked) tokens per attempt: another is a 409 ` +
      "that says to revoke one. Counts as auth-related for rate limits.",
    request: {
      params: AttemptIdParam,
      body: jsonContent(
        z.strictObject({
          expires_in_hours: z
            .number()
            .int()
            .min(IDE_SESSION_LIMITS.minHours)
            .max(IDE_SESSION_LIMITS.maxHours)
            .default(IDE_SESSION_LIMITS.defaultHours)
            .describe(`Lifetime, ${IDE_SESSION_LIMITS.minHours}–${IDE_SESSION_LIMITS.maxHours} hours (default ${IDE_SESSION_LIMITS.defaultHours})`),
        }),
      ),
    },
    responses: {
      "201": jsonResponse("The token; keep it, it is not shown again", IdeSessionSchema),
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is submitted, or already has 5 active tokens", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const attempt = await ownAttempt(db, caller, params.attempt_id);
    const session = unwrap(await openIdeSession(env, attempt.id, body.expires_in_hours));
    return json({ attempt_id: attempt.id, ...session }, 201, { "Cache-Control": "no-store" });
  }
}

export class RevokeIdeSession extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Revoke an IDE session token of the attempt (idempotent)",
    description: "By the attempt's candidate. 204 whether the token was active, already revoked, expired or unknown.",
    request: {
      params: AttemptIdParam.extend({ token: z.string().regex(IDE_TOKEN_PATTERN, "not an IDE session token") }),
    },
    responses: { "204": { description: "Revoked" }, "404": attemptNotFound },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    await ownAttempt(db, caller, params.attempt_id);
    await revokeIdeSession(env, params.attempt_id, params.token);
    return new Response(null, { status: 204 });
  }
}

export const ideSessionRoutes: RouteTable = [
  ["POST", "/attempts/:attempt_id/ide-session", CreateIdeSession],
  ["DELETE", "/attempts/:attempt_id/ide-session/:token", RevokeIdeSession],
];
