import type { IRequest } from "itty-router";
import { z } from "zod";
import { LIVE_LIMITS, LIVE_ROLES } from "../../protocol/socket-messages";
import { liveNotes, liveState, liveTicketAllowed, openLiveSocket } from "../flows/live.flow";
import { jsonResponse, SessionEndpoint, SocketEndpoint, type SessionContext, type SocketContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { socketAnswer, socketUrl } from "../http/sockets";
import { unwrap } from "../http/unwrap";
import { visibleAttempt, visibleAttemptTo } from "../http/visibility";
import { mintWsTicket } from "../http/ws-tickets";
import { AttemptIdParam, attemptNotFound } from "./params";
import type { RouteTable } from "./table";

/** A browser ticket lives as long as the other sockets' (docs/api.md, "WebSocket authentication"). */
const TICKET_SECONDS = 60;

const ticketResource = (attemptId: string) => `live:${attemptId}`;
const socketPath = (attemptId: string) => `/api/v1/attempts/${attemptId}/live/ws`;

const ParticipantSchema = z
  .object({ user_id: z.string(), name: z.string().describe("The user's e-mail address"), role: z.enum(LIVE_ROLES) })
  .meta({ id: "LiveParticipant" });

const LiveStateSchema = z
  .object({
    attempt_id: z.string(),
    live_sessions: z.boolean().describe("The task's setting: whether its attempts may be joined live"),
    open: z.boolean().describe("Whether the caller may open the socket now"),
    reason: z.string().nullable().describe("Why not, when open is false"),
    read_only: z.boolean().describe("The attempt is submitted: the socket replays the document and refuses updates"),
    role: z.enum(LIVE_ROLES).describe("The caller's part in the session"),
    participants: z.array(ParticipantSchema).describe("Who has a live socket open now, once per user"),
    ws_url: z.string(),
  })
  .meta({ id: "LiveSession" });

const LiveTicketSchema = z
  .object({
    ws_url: z.string(),
    ws_ticket: z.string().describe("For browsers: `?ticket=` on ws_url; valid once, for 60 s"),
    ws_ticket_expires_at: z.string(),
  })
  .meta({ id: "LiveTicket" });

const NoteSchema = z
  .object({
    id: z.number().int(),
    author: z.object({ user_id: z.string(), name: z.string() }),
    text: z.string(),
    at: z.string(),
  })
  .meta({ id: "LiveNote" });

const refusals = {
  "403": jsonResponse("Live sessions are off for the attempt's task", ErrorSchema),
  "404": attemptNotFound,
  "409": jsonResponse("The attempt has not been started", ErrorSchema),
};

export class GetLiveSession extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["live"],
    summary: "The attempt's live session: whether it may be joined, and who is in it",
    description:
      "For the attempt's candidate and staff of its organization (404 for anyone else). `open` says whether the caller " +
      "may open the socket now, `reason` why not. See docs/api.md, \"Live sessions\".",
    request: { params: AttemptIdParam },
    responses: { "200": jsonResponse("The live session", LiveStateSchema), "404": attemptNotFound },
  };

  async run({ request, env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt, audience } = await visibleAttempt(db, caller, params.attempt_id);
    const state = await liveState(env, attempt, audience);
    return { attempt_id: attempt.id, ...state, ws_url: socketUrl(request, socketPath(attempt.id)) };
  }
}

export class CreateLiveTicket extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["live"],
    summary: "A browser ticket for the attempt's live socket",
    description:
      "Browsers cannot send Authorization on a WebSocket: they get a ticket here with their Bearer token and open " +
      "`ws_url?ticket=…`. A ticket is for one socket of this attempt, for its caller, once, within 60 s. Refused as the " +
      "socket would be.",
    request: { params: AttemptIdParam },
    responses: { "201": jsonResponse("The socket address and its ticket", LiveTicketSchema), ...refusals },
  };

  async run({ request, env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt } = await visibleAttempt(db, caller, params.attempt_id);
    unwrap(await liveTicketAllowed(env, attempt));
    const ticket = await mintWsTicket(env.URL_SIGNING_SECRET, caller.viewer, ticketResource(attempt.id), TICKET_SECONDS);
    return json(
      { ws_url: socketUrl(request, socketPath(attempt.id)), ws_ticket: ticket.ticket, ws_ticket_expires_at: ticket.expiresAt },
      201,
      { "Cache-Control": "no-store" },
    );
  }
}

export class JoinLiveSession extends SocketEndpoint {
  schema = {
    tags: ["live"],
    summary: "WebSocket: the attempt's shared editor (Yjs), presence, staff notes and run results",
    description:
      "Upgrade with `Authorization: Bearer <session JWT>`, or from a browser with `?ticket=` (POST …/live/ws-ticket). " +
      "The attempt's candidate, or staff of its organization when the task's live_sessions is on and the attempt is " +
      "started. Binary frames are the Yjs sync and awareness protocol as y-websocket speaks it; text frames are JSON " +
      "control messages (protocol/socket-messages.ts, \"live sessions\"). After the submit the socket is read-only. " +
      `At most ${LIVE_LIMITS.socketsPerAttempt} sockets per attempt (429) and frames of ${LIVE_LIMITS.frameBytes} bytes ` +
      `(larger: closed with 1009). See docs/api.md, "Live sessions".`,
    request: {
      params: AttemptIdParam,
      query: z.object({ ticket: z.string().optional().describe("Browser ticket instead of the Authorization header") }),
    },
    responses: {
      "101": { description: "Switching to the WebSocket protocol" },
      ...refusals,
      "426": jsonResponse("Not a WebSocket upgrade request", ErrorSchema),
      "429": jsonResponse("Too many live sockets on this attempt, or rate limited", ErrorSchema),
    },
  };

  protected resource(request: IRequest): string {
    return ticketResource(String(request.params?.attempt_id ?? ""));
  }

  async run({ env, db, credential }: SocketContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt, audience } = await visibleAttemptTo(db, credential.viewer, params.attempt_id);
    const opened = unwrap(await openLiveSocket(env, attempt, { userId: credential.viewer.userId, role: audience, ticket: credential.ticket }));
    return socketAnswer(opened);
  }
}

export class ListLiveNotes extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["live"],
    summary: "Staff notes of the attempt's live session, oldest first",
    description:
      `Staff of the attempt's organization only; never the candidate (403). At most ${LIVE_LIMITS.notesPerAttempt} per attempt. ` +
      "Staff add them on the live socket (`note_add`).",
    request: { params: AttemptIdParam, query: paginationQuery({ defaultLimit: 100, maxLimit: LIVE_LIMITS.notesPerAttempt }) },
    responses: { "200": jsonResponse("A page of notes", pageEnvelope(NoteSchema)), "404": attemptNotFound },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const { attempt, audience } = await visibleAttempt(db, caller, params.attempt_id);
    if (audience !== "staff") throw HttpError.forbidden("Live session notes are for staff of the organization only");
    const notes = liveNotes(env, attempt.id);
    return paginate(query, notes.count, notes.page);
  }
}

export const liveRoutes: RouteTable = [
  ["GET", "/attempts/:attempt_id/live", GetLiveSession],
  ["POST", "/attempts/:attempt_id/live/ws-ticket", CreateLiveTicket],
  ["GET", "/attempts/:attempt_id/live/ws", JoinLiveSession],
  ["GET", "/attempts/:attempt_id/live/notes", ListLiveNotes],
];
