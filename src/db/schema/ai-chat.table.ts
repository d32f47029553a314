import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { AI_PROVIDERS, CHAT_MESSAGE_STATUSES, CHAT_ROLES, type SharedFileRecord } from "../../domain/ai-chat";
import { attempts } from "./attempts.table";

/**
 * The AI chat transcript of each attempt (docs/api.md, "AI chat"): the candidate's messages and
 * the assistant's answers, as the candidate and the reviewers read them. A candidate's message
 * is stored before its answer is asked for, and the answer once it has ended, complete or not.
 */
export const aiChatMessages = sqliteTable(
  "ai_chat_messages",
  {
    id: text("id").primaryKey(),
    attemptId: text("attempt_id").notNull().references(() => attempts.id),
    /** Its place in the conversation, from the attempt object's count of messages (domain/ai-chat.ts, `userSeq`). */
    seq: integer("seq").notNull(),
    role: text("role", { enum: CHAT_ROLES }).notNull(),
    content: text("content").notNull(),
    status: text("status", { enum: CHAT_MESSAGE_STATUSES }).notNull(),
    error: text("error"),
    /** The files shared with a candidate's message: paths and sizes only. */
    files: text("files", { mode: "json" }).$type<SharedFileRecord[]>().notNull(),
    replyTo: text("reply_to"),
    provider: text("provider", { enum: AI_PROVIDERS }),
    model: text("model"),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    /** True when the provider reported no usage and the counts are the service's estimate. */
    usageEstimated: integer("usage_estimated", { mode: "boolean" }),
    /** A candidate's message: when it was sent; an answer: when the provider was asked. */
    createdAt: text("created_at").notNull(),
    firstTokenAt: text("first_token_at"),
    endedAt: text("ended_at"),
  },
  (t) => [
    uniqueIndex("ai_chat_attempt_seq_idx").on(t.attemptId, t.seq),
    // The evaluation timeline reads the transcript by time.
    index("ai_chat_attempt_time_idx").on(t.attemptId, t.createdAt, t.seq),
  ],
);
