import { type AttemptRecord } from "../../domain/attempts";
import { accept, type Outcome } from "../../domain/outcome";
import { AI_CHAT_LIMITS, chatStateRefusal, chatWindowRefusal } from "../../domain/ai-chat";

// The attempt's side of AI chat: whether a message may be sent now, counted exactly. Synchronous,
// so the AttemptDO checks and counts within one step of its input gate and concurrent messages
// cannot pass the window together.

/**
 * Counts a message sent at `nowMs` when the attempt is in progress and its window has room, and
 * returns its turn: the attempt's count of chat messages, which orders the conversation.
 */
export function reserveChatTurn(sql: SqlStorage, attempt: AttemptRecord, nowMs: number): Outcome<number> {
  const refusal = chatStateRefusal(attempt);
  if (refusal) return { ok: false, refusal };
  sql.exec("DELETE FROM ai_chat_sends WHERE at_ms <= ?", nowMs - AI_CHAT_LIMITS.windowMs);
  const sent = sql.exec<{ at_ms: number }>("SELECT at_ms FROM ai_chat_sends ORDER BY at_ms").toArray().map((r) => r.at_ms);
  const full = chatWindowRefusal(attempt.id, sent, nowMs);
  if (full) return { ok: false, refusal: full };
  return accept(sql.exec<{ turn: number }>("INSERT INTO ai_chat_sends (at_ms) VALUES (?) RETURNING turn", nowMs).one().turn);
}
