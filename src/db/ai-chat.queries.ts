import { and, asc, count, desc, eq, lt, or } from "drizzle-orm";
import type { ChatMessage, ChatTurn } from "../domain/ai-chat";
import type { Database } from "./client";
import { aiChatMessages, attempts } from "./schema";

// The AI chat transcript in D1 (docs/api.md, "AI chat"). The attempt's object decides whether
// a message may be sent; these only store and read what was said.

export type ChatMessageRow = typeof aiChatMessages.$inferSelect;
export type NewChatMessage = typeof aiChatMessages.$inferInsert;

const elapsedMs = (from: string, to: string) => Date.parse(to) - Date.parse(from);

/** A stored message as the API shows it. */
export function chatMessageOf(row: ChatMessageRow): ChatMessage {
  return {
    message_id: row.id,
    attempt_id: row.attemptId,
    seq: row.seq,
    role: row.role,
    content: row.content,
    status: row.status,
    error: row.error,
    files: row.files,
    reply_to: row.replyTo,
    provider: row.provider,
    model: row.model,
    usage:
      row.promptTokens === null || row.completionTokens === null
        ? null
        : { prompt_tokens: row.promptTokens, completion_tokens: row.completionTokens, estimated: row.usageEstimated ?? true },
    timing:
      row.endedAt !== null
        ? {
            first_token_at: row.firstTokenAt,
            ended_at: row.endedAt,
            first_token_ms: row.firstTokenAt === null ? null : elapsedMs(row.createdAt, row.firstTokenAt),
            total_ms: elapsedMs(row.createdAt, row.endedAt),
          }
        : null,
    created_at: row.createdAt,
  };
}

export async function insertChatMessage(db: Database, message: NewChatMessage): Promise<ChatMessage> {
  return chatMessageOf(await db.insert(aiChatMessages).values(message).returning().get());
}

/** What the chat needs of an attempt found by an IDE session token: its task. */
export async function findChatAttempt(db: Database, attemptId: string) {
  return db.select({ id: attempts.id, taskId: attempts.taskId }).from(attempts).where(eq(attempts.id, attemptId)).get();
}

export async function countChatMessages(db: Database, attemptId: string): Promise<number> {
  const row = await db.select({ n: count() }).from(aiChatMessages).where(eq(aiChatMessages.attemptId, attemptId)).get();
  return row?.n ?? 0;
}

/** A page of the conversation, in its order. */
export async function chatMessagePage(db: Database, attemptId: string, limit: number, offset: number): Promise<ChatMessage[]> {
  const rows = await db
    .select()
    .from(aiChatMessages)
    .where(eq(aiChatMessages.attemptId, attemptId))
    .orderBy(asc(aiChatMessages.seq))
    .limit(limit)
    .offset(offset)
    .all();
  return rows.map(chatMessageOf);
}

/**
 * Up to `limit` messages before `seq`, oldest first: the conversation a new message continues.
 * An answer that failed is left out; the candidate's message before it stays.
 */
export async function chatHistory(db: Database, attemptId: string, seq: number, limit: number): Promise<ChatTurn[]> {
  const rows = await db
    .select({ role: aiChatMessages.role, content: aiChatMessages.content })
    .from(aiChatMessages)
    .where(
      and(
        eq(aiChatMessages.attemptId, attemptId),
        lt(aiChatMessages.seq, seq),
        or(eq(aiChatMessages.role, "user"), eq(aiChatMessages.status, "complete")),
      ),
    )
    .orderBy(desc(aiChatMessages.seq))
    .limit(limit)
    .all();
  return rows.reverse();
}
