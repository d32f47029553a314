import { z } from "zod";
import { AI_CHAT_LIMITS, AI_PROVIDERS } from "../domain/ai-chat";
import { chatMessages, sendChatMessage, type ChatSender } from "../flows/ai-chat.flow";
import { IdeSession } from "../http/auth";
import { IdeSessionEndpoint, jsonContent, jsonResponse, type IdeSessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { ownAttempt, visibleAttempt } from "../http/visibility";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import { ChatMessageSchema } from "./schemas";
import type { RouteTable } from "./table";

const { messagesPerWindow, windowMs, messageChars, files: maxFiles, filesBytes, historyMessages, replyMaxTokens } = AI_CHAT_LIMITS;

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

  async run({ env, exec, db, principal }: IdeSessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const sender: ChatSender =
      principal instanceof IdeSession
        ? { kind: "ide", attemptId: params.attempt_id, tokenHash: principal.tokenHash }
        : { kind: "candidate", attempt: await ownAttempt(db, principal, params.attempt_id) };
    const reply = unwrap(await sendChatMessage(env, exec, { sender, message: body.message, files: body.files }));
    if ("providerMissing" in reply) {
      throw new HttpError(503, "AI chat is not available on this service: its AI provider is not configured", { "Retry-After": "60" });
    }
    return new Response(reply.stream, { headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store" } });
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

  async run({ env, db, principal }: IdeSessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const attemptId = principal instanceof IdeSession ? params.attempt_id : (await visibleAttempt(db, principal, params.attempt_id)).attempt.id;
    const messages = chatMessages(env, attemptId);
    return paginate(query, messages.count, messages.page);
  }
}

export const aiChatRoutes: RouteTable = [
  ["POST", "/attempts/:attempt_id/ai-chat/messages", SendChatMessage],
  ["GET", "/attempts/:attempt_id/ai-chat/messages", ListChatMessages],
];
