import { z } from "zod";
import { chatMessagePage, countChatMessages, findChatAttempt } from "../db/ai-chat";
import { database, type Database } from "../db/client";
import { findTask } from "../db/tasks";
import { AI_CHAT_LIMITS, AI_PROVIDERS, CHAT_MESSAGE_STATUSES, CHAT_ROLES } from "../domain/ai-chat";
import type { AttemptActor } from "../durable/attempt/types";
import { sendChatMessage } from "../flows/ai-chat";
import { IdeSession, type Caller } from "../http/auth";
import { IdeSessionEndpoint, jsonContent, jsonResponse, type IdeSessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError } from "../http/errors";
import { unwrap } from "../http/outcome";
import { pageEnvelope, paginate, paginationQuery } from "../http/pagination";
import { ownAttempt, visibleAttempt } from "../http/visibility";
import { log } from "../lib/log";
import { chatProvider } from "../services/ai/provider";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import type { RouteTable } from "./table";

const int = z.number().int();
const { messagesPerWindow, windowMs, messageChars, files: maxFiles, filesBytes, historyMessages, replyMaxTokens } = AI_CHAT_LIMITS;

export const ChatMessageSchema = z
  .object({
    message_id: z.string(),
    attempt_id: z.string(),
    seq: int.describe("Its place in the conversation: a candidate's message 2n, its answer 2n + 1"),
    role: z.enum(CHAT_ROLES),
    content: z.string().describe("The candidate's message, or the assistant's answer (what came of it, when it failed)"),
    status: z.enum(CHAT_MESSAGE_STATUSES).describe("error: the provider failed before the answer was complete"),
    error: z.string().nullable().describe("Why the answer failed"),
    files: z
      .array(z.object({ path: z.string(), bytes: int }))
      .describe("The files the candidate shared with the message (their contents are not kept); [] for answers"),
    reply_to: z.string().nullable().describe("An answer: the message_id of the candidate's message"),
    provider: z.enum(AI_PROVIDERS).nullable().describe("An answer: the provider that wrote it; local is the stand-in of development and tests"),
    model: z.string().nullable(),
    usage: z
      .object({
        prompt_tokens: int,
        completion_tokens: int,
        estimated: z.boolean().describe("True when the provider reported no usage and these are the service's estimate (about 4 characters a token)"),
      })
      .nullable()
      .describe("An answer: tokens of the prompt and of the answer"),
    timing: z
      .object({
        first_token_at: z.string().nullable(),
        ended_at: z.string(),
        first_token_ms: int.nullable().describe("From created_at (the provider was asked) to the first text"),
        total_ms: int,
      })
      .nullable()
      .describe("An answer: how long it took"),
    created_at: z.string().describe("A candidate's message: when it was sent; an answer: when the provider was asked"),
  })
  .meta({ id: "AiChatMessage" });

const StreamEventSchema = z
  .union([
    z
      .object({
        type: z.literal("start"),
        message: ChatMessageSchema.describe("The candidate's message, stored and counted"),
        answer_id: z.string().describe("The message_id the answer will have"),
        provider: z.enum(AI_PROVIDERS),
        model: z.string(),
      })
      .meta({ id: "AiChatStartEvent" }),
    z.object({ type: z.literal("delta"), text: z.string().describe("The next piece of the answer") }).meta({ id: "AiChatDeltaEvent" }),
    z.object({ type: z.literal("done"), message: ChatMessageSchema.describe("The answer, stored") }).meta({ id: "AiChatDoneEvent" }),
    z
      .object({
        type: z.literal("error"),
        detail: z.string(),
        message: ChatMessageSchema.nullable().describe("The answer as stored, status error, with what came before the failure"),
      })
      .meta({ id: "AiChatErrorEvent" }),
  ])
  .describe("The `data` of each event, JSON; its `type` is the event's name");

const SendBody = z.strictObject({
  message: z.string().trim().min(1).max(messageChars).describe(`The candidate's message, 1–${messageChars} characters`),
  files: z
    .array(
      z.strictObject({
        path: RepoPath.describe("A repository path, by the changes overlay's rules"),
        content: z.string().describe("The file's text as the candidate has it"),
      }),
    )
    .max(maxFiles)
    .default([])
    .superRefine((files, ctx) => {
      if (new Set(files.map((f) => f.path)).size !== files.length) ctx.addIssue({ code: "custom", message: "a path appears twice" });
      const bytes = files.reduce((n, f) => n + new TextEncoder().encode(f.content).byteLength, 0);
      if (bytes > filesBytes) ctx.addIssue({ code: "custom", message: `the files hold ${bytes} bytes; at most ${filesBytes} may be shared` });
    })
    .describe(
      `Files the candidate chooses to show the assistant, at most ${maxFiles} and ${filesBytes} bytes of UTF-8 together. ` +
        "A hidden test file of the task is refused (422, type hidden_test).",
    ),
});

/** The attempt the caller chats in, and who acts: its IDE session (checked by the path), or its candidate (404 unseen, 403 staff). */
async function chatAttempt(db: Database, principal: Caller | IdeSession, attemptId: string): Promise<{ taskId: string; actor: AttemptActor }> {
  if (principal instanceof IdeSession) {
    const attempt = await findChatAttempt(db, attemptId);
    if (!attempt) throw HttpError.notFound(`Attempt ${attemptId} not found`);
    return { taskId: attempt.taskId, actor: { kind: "ide", tokenHash: principal.tokenHash } };
  }
  const attempt = await ownAttempt(db, principal, attemptId);
  return { taskId: attempt.taskId, actor: { kind: "candidate" } };
}

export class SendChatMessage extends IdeSessionEndpoint {
  protected readonly role = "candidate";
  protected override readonly maxBodyBytes = AI_CHAT_LIMITS.bodyBytes;
  schema = {
    tags: ["ai-chat"],
    summary: "Send a message to the attempt's AI assistant; the answer streams back as Server-Sent Events",
    description:
      "By the attempt's candidate or an IDE session token of the attempt, while it is IN_PROGRESS (409 otherwise), on a " +
      "task whose ai_assistance is on (403 otherwise). The assistant is told to help without writing the solution; it " +
      "is given the task statement as the candidate reads it, the conversation so far (the last " +
      `${historyMessages} messages at most), the message and the files shared with it, never the hidden tests or the ` +
      `solution. At most ${messagesPerWindow} messages per attempt in any ${windowMs / 1000} seconds, counted exactly ` +
      "(429 with Retry-After: the seconds until one is free); a message counts once accepted, also when the provider " +
      "then fails. Refusals are JSON errors before any event. Accepted: 200 `text/event-stream`: `start` (the stored " +
      `message), \`delta\`s of the answer (at most ${replyMaxTokens} tokens), then \`done\` (the stored answer with ` +
      "model, usage and timing) or `error` (the provider failed; the answer is stored with what came). " +
      "See docs/api.md, \"AI chat\".",
    request: { params: AttemptIdParam, body: jsonContent(SendBody) },
    responses: {
      "200": {
        description: "The answer as Server-Sent Events: `event: start|delta|done|error`, `data:` one line of JSON",
        content: { "text/event-stream": { schema: StreamEventSchema } },
      },
      "403": jsonResponse("The task does not allow AI assistance, or the caller is staff (who may only read)", ErrorSchema),
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is not in progress", ErrorSchema),
      "429": jsonResponse(`${messagesPerWindow} messages in the last ${windowMs / 1000} seconds, or a per-IP limit; Retry-After`, ErrorSchema),
      "503": jsonResponse("The service's AI provider is not configured; nothing was counted", ErrorSchema),
    },
  };

  async run({ env, exec, principal }: IdeSessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const { taskId, actor } = await chatAttempt(db, principal, params.attempt_id);
    const task = await findTask(db, taskId);
    if (!task) throw new Error(`attempt ${params.attempt_id} has no task ${taskId}`);
    if (!task.aiAssistance) {
      throw HttpError.forbidden(`Task ${task.id} does not allow AI assistance: its organization has not turned AI chat on for it`);
    }
    const provider = chatProvider(env);
    if ("unavailable" in provider) {
      log("error", "AI chat has no provider", { reason: provider.unavailable });
      throw new HttpError(503, "AI chat is not available on this service: its AI provider is not configured", { "Retry-After": "60" });
    }
    const stream = unwrap(
      await sendChatMessage(env, exec, provider, { attemptId: params.attempt_id, task, actor, message: body.message, files: body.files }),
    );
    return new Response(stream, { headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store" } });
  }
}

export class ListChatMessages extends IdeSessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["ai-chat"],
    summary: "The attempt's AI chat conversation, both sides",
    description:
      "For the attempt's candidate, an IDE session token of the attempt, and staff of its organization (interviewer or " +
      "higher, read-only; the evaluation timeline shows the same messages among the attempt's other events). Anyone " +
      "else gets the attempt's 404. In conversation order (seq), paginated.",
    request: { params: AttemptIdParam, query: paginationQuery({ defaultLimit: 50, maxLimit: 100 }) },
    responses: { "200": jsonResponse("A page of the conversation", pageEnvelope(ChatMessageSchema)), "404": attemptNotFound },
  };

  async run({ env, principal }: IdeSessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const attemptId = principal instanceof IdeSession ? params.attempt_id : (await visibleAttempt(db, principal, params.attempt_id)).attempt.id;
    return paginate(
      query,
      () => countChatMessages(db, attemptId),
      (limit, offset) => chatMessagePage(db, attemptId, limit, offset),
    );
  }
}

export const aiChatRoutes: RouteTable = [
  ["POST", "/attempts/:attempt_id/ai-chat/messages", SendChatMessage],
  ["GET", "/attempts/:attempt_id/ai-chat/messages", ListChatMessages],
];
