import { chatHistory, chatMessagePage, countChatMessages, findChatAttempt, insertChatMessage } from "../db/ai-chat.queries";
import { database, type Database } from "../db/client";
import { findTask } from "../db/tasks.queries";
import {
  AI_CHAT_LIMITS,
  buildPrompt,
  estimatePromptTokens,
  estimateTokens,
  sharedFileIssues,
  sseEvent,
  userSeq,
  type ChatMessage,
  type PromptMessage,
  type SharedFile,
  type TokenUsage,
} from "../domain/ai-chat";
import { accept, invalid, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import { hiddenTestFiles } from "../domain/scoring-jobs";
import { taskStatement } from "../domain/statement";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { AttemptActor } from "../durable/attempt/attempt-types";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { log } from "../lib/log";
import { chatProvider } from "../services/ai/provider";
import { AiProviderError, type ChatProvider } from "../services/ai/ai-types";

// AI chat in the IDE (docs/api.md, "AI chat"): a candidate's message, counted by the attempt's
// object and stored, and the provider's answer streamed to the client as Server-Sent Events
// and stored when it ends.

/**
 * Who sends: the attempt's candidate, whose attempt the route has already read, or an IDE
 * session of the attempt, whose attempt is read here.
 */
export type ChatSender = { kind: "candidate"; attempt: { id: string; taskId: string } } | { kind: "ide"; attemptId: string; tokenHash: string };

export interface ChatSend {
  sender: ChatSender;
  message: string;
  files: SharedFile[];
}

/** The answer's event stream, or no stream at all when the service has no AI provider to ask. */
export type ChatReply = { stream: ReadableStream<Uint8Array> } | { providerMissing: true };

const iso = (ms: number) => new Date(ms).toISOString();
const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * Sends a candidate's message and answers with the event stream of the reply. Refusals come
 * before anything is counted or stored: a task without AI assistance (403), a hidden test
 * among the shared files (422), an IDE token the object no longer honours (401), an attempt
 * not in progress (409), a full window (429). From there the message counts, whatever the
 * provider does, and is stored; the answer is read to its end and stored even when the client
 * goes away.
 */
export async function sendChatMessage(env: Env, exec: Pick<ExecutionContext, "waitUntil">, send: ChatSend): Promise<Outcome<ChatReply>> {
  const db = database(env.DB);
  const { sender } = send;
  const found = await senderAttempt(db, sender);
  if (!found.ok) return found;
  const attempt = found.value;
  const task = await findTask(db, attempt.taskId);
  if (!task) throw new Error(`attempt ${attempt.id} has no task ${attempt.taskId}`);
  if (!task.aiAssistance) {
    return refuse("forbidden", `Task ${task.id} does not allow AI assistance: its organization has not turned AI chat on for it`);
  }
  const provider = chatProvider(env);
  if ("unavailable" in provider) {
    log("error", "AI chat has no provider", { reason: provider.unavailable });
    return accept({ providerMissing: true });
  }
  const hiddenTests = new Set([...(task.testFiles ?? []), ...hiddenTestFiles(task.failToPass ?? [], task.passToPass ?? [])]);
  const issues = sharedFileIssues(send.files, hiddenTests);
  if (issues.length > 0) return invalid(issues);

  const actor: AttemptActor = sender.kind === "ide" ? { kind: "ide", tokenHash: sender.tokenHash } : { kind: "candidate" };
  const turn = await attemptObject(env, attempt.id).reserveChatMessage(actor);
  if (!turn.ok) return turn;
  const seq = userSeq(turn.value);
  const question = await insertChatMessage(db, {
    id: newId("chat"),
    attemptId: attempt.id,
    seq,
    role: "user",
    content: send.message,
    status: "complete",
    files: send.files.map((f) => ({ path: f.path, bytes: utf8Bytes(f.content) })),
    createdAt: iso(Date.now()),
  });
  const history = await chatHistory(db, attempt.id, seq, AI_CHAT_LIMITS.historyMessages);
  const prompt = buildPrompt({ statement: taskStatement(task), language: task.language, history, message: send.message, files: send.files });

  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  // Not awaited: a client that reads slowly or has gone away must not hold up or lose the answer.
  const emit = (event: string, data: object) => void writer.write(encoder.encode(sseEvent(event, { type: event, ...data }))).catch(() => undefined);
  const answerId = newId("chat");
  emit("start", { message: question, answer_id: answerId, provider: provider.name, model: provider.model });
  exec.waitUntil(
    streamAnswer(db, provider, prompt, emit, { id: answerId, attemptId: attempt.id, seq: seq + 1, replyTo: question.message_id }).finally(
      () => void writer.close().catch(() => undefined),
    ),
  );
  return accept({ stream: readable });
}

async function senderAttempt(db: Database, sender: ChatSender): Promise<Outcome<{ id: string; taskId: string }>> {
  if (sender.kind === "candidate") return accept(sender.attempt);
  const attempt = await findChatAttempt(db, sender.attemptId);
  return attempt ? accept(attempt) : refuse("not_found", `Attempt ${sender.attemptId} not found`);
}

/** The attempt's conversation, both sides, in order, page by page. */
export function chatMessages(env: Env, attemptId: string): Listing<ChatMessage> {
  const db = database(env.DB);
  return { count: () => countChatMessages(db, attemptId), page: (limit, offset) => chatMessagePage(db, attemptId, limit, offset) };
}

/** Reads the provider's answer into `delta` events, stores it, and ends the stream with `done`, or `error` and what came. */
async function streamAnswer(
  db: Database,
  provider: ChatProvider,
  prompt: PromptMessage[],
  emit: (event: string, data: object) => void,
  answer: { id: string; attemptId: string; seq: number; replyTo: string },
): Promise<void> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), AI_CHAT_LIMITS.replyTimeoutMs);
  const startedAt = Date.now();
  let firstTokenAt: number | null = null;
  let text = "";
  let usage: TokenUsage | null = null;
  let error: string | null = null;
  try {
    for await (const piece of provider.reply(prompt, { maxTokens: AI_CHAT_LIMITS.replyMaxTokens, signal: timeout.signal })) {
      if ("usage" in piece) {
        usage = piece.usage;
        continue;
      }
      firstTokenAt ??= Date.now();
      text += piece.text;
      emit("delta", { text: piece.text });
    }
  } catch (e) {
    if (timeout.signal.aborted) error = `the AI provider gave no complete answer within ${AI_CHAT_LIMITS.replyTimeoutMs / 1000} seconds`;
    else if (e instanceof AiProviderError) error = e.message;
    else {
      log("error", "AI chat answer failed", { attempt_id: answer.attemptId, error: String(e), stack: e instanceof Error ? e.stack : undefined });
      error = "the answer failed unexpectedly";
    }
  } finally {
    clearTimeout(timer);
  }
  let message: ChatMessage;
  try {
    message = await insertChatMessage(db, {
      id: answer.id,
      attemptId: answer.attemptId,
      seq: answer.seq,
      role: "assistant",
      content: text,
      status: error === null ? "complete" : "error",
      error,
      files: [],
      replyTo: answer.replyTo,
      provider: provider.name,
      model: provider.model,
      promptTokens: usage?.prompt_tokens ?? estimatePromptTokens(prompt),
      completionTokens: usage?.completion_tokens ?? estimateTokens(text),
      usageEstimated: usage === null,
      createdAt: iso(startedAt),
      firstTokenAt: firstTokenAt === null ? null : iso(firstTokenAt),
      endedAt: iso(Date.now()),
    });
  } catch (e) {
    log("error", "AI chat answer could not be stored", { attempt_id: answer.attemptId, error: String(e) });
    emit("error", { detail: "the answer could not be stored", message: null });
    return;
  }
  if (error === null) emit("done", { message });
  else emit("error", { detail: error, message });
}
