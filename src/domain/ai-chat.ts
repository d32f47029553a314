/**
 * AI chat in the IDE (docs/api.md, "AI chat"): its limits, the per-attempt message window, the
 * prompt a provider is given, token estimates, the local stand-in's answers, and Server-Sent
 * Events, both as the service streams them and as providers stream to it.
 */
import type { FieldIssue, Refusal } from "./outcome";
import type { TaskStatement } from "./statement";

const KiB = 1024;

/** docs/limits.md, "AI chat". */
export const AI_CHAT_LIMITS = {
  /** Messages a candidate may send per attempt in any window of `windowMs`, counted exactly by the attempt's object. */
  messagesPerWindow: 10,
  windowMs: 60_000,
  messageChars: 4_000,
  /** Files shared with one message, and their UTF-8 bytes together. */
  files: 5,
  filesBytes: 32 * KiB,
  /** Earlier messages of the conversation the prompt carries, newest kept first, within `historyChars`. */
  historyMessages: 10,
  historyChars: 12_000,
  replyMaxTokens: 1_024,
  /** Past this the provider's stream is given up and the answer stored as an error. */
  replyTimeoutMs: 120_000,
  /** Room for the message and the files as JSON, whose escapes can make text several times longer. */
  bodyBytes: 256 * KiB,
} as const;

export const AI_PROVIDERS = ["workers-ai", "openai", "local"] as const;
export type AiProviderName = (typeof AI_PROVIDERS)[number];

export const CHAT_ROLES = ["user", "assistant"] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];
/** `error`: the provider failed before the answer was complete; the message holds what came. */
export const CHAT_MESSAGE_STATUSES = ["complete", "error"] as const;
export type ChatMessageStatus = (typeof CHAT_MESSAGE_STATUSES)[number];

/** What the transcript keeps of a shared file: its path and size, not its content. */
export interface SharedFileRecord {
  path: string;
  bytes: number;
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A message of the conversation as the API shows it (to the candidate, to staff, in the timeline). */
export interface ChatMessage {
  message_id: string;
  attempt_id: string;
  /** Position in the conversation: a candidate's message is 2n, its answer 2n + 1. */
  seq: number;
  role: ChatRole;
  content: string;
  status: ChatMessageStatus;
  error: string | null;
  files: SharedFileRecord[];
  /** The candidate's message an answer answers. */
  reply_to: string | null;
  provider: AiProviderName | null;
  model: string | null;
  usage: (TokenUsage & { estimated: boolean }) | null;
  timing: { first_token_at: string | null; ended_at: string; first_token_ms: number | null; total_ms: number } | null;
  created_at: string;
}

/** The seq of a candidate's message by its turn (the attempt object's count of messages); its answer's is one more. */
export const userSeq = (turn: number) => 2 * turn;

/** A conflict unless the attempt is in progress: chat belongs to the work, not to before or after it. */
export function chatStateRefusal(attempt: { id: string; status: string; auto_submitted: boolean }): Refusal | undefined {
  if (attempt.status === "IN_PROGRESS") return undefined;
  if (attempt.status === "NOT_STARTED") {
    return { kind: "conflict", detail: `Attempt ${attempt.id} has not been started; start it before using AI chat` };
  }
  return {
    kind: "conflict",
    detail: `Attempt ${attempt.id} is locked: it was submitted${attempt.auto_submitted ? " automatically at its deadline" : ""}; AI chat has ended`,
  };
}

/**
 * Rate-limited when the attempt has sent `messagesPerWindow` messages within the window before `nowMs`
 * (`sentMs`: their times, oldest first), with the seconds until the oldest that counts leaves it.
 */
export function chatWindowRefusal(attemptId: string, sentMs: readonly number[], nowMs: number): Refusal | undefined {
  const { messagesPerWindow, windowMs } = AI_CHAT_LIMITS;
  const inWindow = sentMs.filter((at) => at > nowMs - windowMs);
  if (inWindow.length < messagesPerWindow) return undefined;
  const freesAt = (inWindow[inWindow.length - messagesPerWindow] ?? nowMs) + windowMs;
  const retryAfterSeconds = Math.max(1, Math.ceil((freesAt - nowMs) / 1000));
  return {
    kind: "rate_limited",
    retryAfterSeconds,
    detail:
      `Attempt ${attemptId} has sent ${inWindow.length} AI chat messages in the last ${windowMs / 1000} seconds; at most ` +
      `${messagesPerWindow} may be. Retry after ${retryAfterSeconds} seconds.`,
  };
}

/**
 * Files a candidate may not share: the task's hidden tests. They are not in the candidate's
 * workspace, and refusing their paths keeps a stray copy out of the prompt too.
 */
export function sharedFileIssues(files: readonly { path: string }[], hiddenTests: ReadonlySet<string>): FieldIssue[] {
  return files.flatMap((file, i): FieldIssue[] =>
    hiddenTests.has(file.path)
      ? [{ loc: ["body", "files", i, "path"], msg: `${file.path} is a hidden test of the task and cannot be shared with the assistant`, type: "hidden_test" }]
      : [],
  );
}

// ---------------------------------------------------------------- the prompt

export type PromptRole = "system" | "user" | "assistant";
export interface PromptMessage {
  role: PromptRole;
  content: string;
}

export interface SharedFile {
  path: string;
  content: string;
}

export interface ChatTurn {
  role: ChatRole;
  content: string;
}

export const SYSTEM_INSTRUCTIONS = [
  "You are the assistant inside a coding assessment. A candidate is working on the task below, and their work will be evaluated.",
  "Help them understand the task, the code and the errors they meet: explain concepts, ask what they have tried, point at where to look, and suggest how to debug or test.",
  "Do not write the solution for them: no complete implementation of the task, no patch or diff that solves it, no finished functions to paste in. Short snippets that illustrate a general point are fine.",
  "If they ask for the solution, say that you cannot give it in an assessment and offer a hint instead.",
  "You know only the task statement, this conversation and the files the candidate shares; you do not know the tests used to score the work, and you must not guess at them.",
].join("\n");

/** A code fence longer than any run of backticks in `text`, so a shared file cannot close it. */
function fenceFor(text: string): string {
  const longest = [...text.matchAll(/`+/g)].reduce((n, m) => Math.max(n, m[0].length), 0);
  return "`".repeat(Math.max(3, longest + 1));
}

/** The candidate's message with the files they chose to share. */
export function userContent(message: string, files: readonly SharedFile[]): string {
  if (files.length === 0) return message;
  const shared = files.map((f) => {
    const fence = fenceFor(f.content);
    return `File ${f.path}:\n${fence}\n${f.content}\n${fence}`;
  });
  return `${message}\n\nFiles I am sharing:\n\n${shared.join("\n\n")}`;
}

/** The newest earlier messages that fit the bounds, oldest first; older ones go first, never a gap. */
export function boundHistory(turns: readonly ChatTurn[]): ChatTurn[] {
  const kept: ChatTurn[] = [];
  let chars = 0;
  for (let i = turns.length - 1; i >= 0 && kept.length < AI_CHAT_LIMITS.historyMessages; i--) {
    const turn = turns[i] as ChatTurn;
    if (chars + turn.content.length > AI_CHAT_LIMITS.historyChars) break;
    chars += turn.content.length;
    kept.push(turn);
  }
  return kept.reverse();
}

/**
 * What a provider is given: the instructions with the task statement the candidate reads, the
 * conversation so far (bounded), and the message with the files the candidate shared. The
 * hidden tests, the test patch and the solution are not among its inputs, so it cannot carry them.
 */
export function buildPrompt(input: {
  statement: TaskStatement | null;
  language: string | null;
  history: readonly ChatTurn[];
  message: string;
  files: readonly SharedFile[];
}): PromptMessage[] {
  const task = input.statement ? `# ${input.statement.title}\n\n${input.statement.body}` : "(The task statement is not available.)";
  const language = input.language ? `\nThe repository's main language is ${input.language}.` : "";
  return [
    { role: "system", content: `${SYSTEM_INSTRUCTIONS}${language}\n\nThe task, as the candidate reads it:\n\n${task}` },
    ...boundHistory(input.history).map((t): PromptMessage => ({ role: t.role, content: t.content })),
    { role: "user", content: userContent(input.message, input.files) },
  ];
}

/** A deterministic estimate of the tokens in `text` (about four characters each), for providers that do not report usage. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** The estimate for a whole prompt: its contents plus a few tokens of framing per message. */
export const estimatePromptTokens = (prompt: readonly PromptMessage[]) =>
  prompt.reduce((n, m) => n + estimateTokens(m.content) + 4, 0);

// ---------------------------------------------------------------- the local stand-in

export const LOCAL_MODEL = "assay-local-1";
export const LOCAL_ANSWER_PREFIX = "[local assistant]";

/** FNV-1a over UTF-16 code units: a short, stable fingerprint of a prompt. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * The local provider's answer to a prompt, in the chunks it streams: it says plainly that no
 * model wrote it, and depends on nothing but the prompt, so tests and demos can rely on it.
 */
export function localAnswer(prompt: readonly PromptMessage[]): string[] {
  const last = prompt.at(-1)?.content ?? "";
  const question = last.split("\n\nFiles I am sharing:")[0]?.replace(/\s+/g, " ").trim() ?? "";
  const quoted = question.length > 120 ? `${question.slice(0, 117)}...` : question;
  const files = [...last.matchAll(/^File (.+):\n`{3,}$/gm)].map((m) => m[1]);
  const earlier = prompt.filter((m) => m.role !== "system").length - 1;
  const text =
    `${LOCAL_ANSWER_PREFIX} This reply comes from the local stand-in for development and tests, not from a language model. ` +
    `You asked: "${quoted}". I was given the task statement, ${earlier} earlier message${earlier === 1 ? "" : "s"} of this ` +
    `conversation and ${files.length === 0 ? "no shared files" : `the shared file${files.length === 1 ? "" : "s"} ${files.join(", ")}`}. ` +
    "A real assistant would now help you reason about it without writing the solution: reproduce the problem with the " +
    "smallest input you can, read the failing assertion closely, and change one thing at a time. " +
    `Prompt fingerprint ${fingerprint(JSON.stringify(prompt))}.`;
  const words = text.split(/(?<= )/);
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += 8) chunks.push(words.slice(i, i + 8).join(""));
  return chunks;
}

// ---------------------------------------------------------------- Server-Sent Events

/** One event as the service streams it: JSON has no raw line breaks, so `data` is one line. */
export function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface SseMessage {
  event: string;
  data: string;
}

/**
 * An incremental reader of an event stream (the WHATWG "text/event-stream" rules: LF, CRLF or
 * CR line ends, `data` lines joined by LF, comments skipped, `message` as the default event).
 * Text may arrive cut anywhere, a CRLF included.
 */
export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];

  /** The events completed by `text`. */
  feed(text: string): SseMessage[] {
    this.buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (!match || (match[0] === "\r" && match.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  /** The end of the stream: an event without its closing blank line is dropped, as the standard says. */
  end(): SseMessage[] {
    const out = this.buffer.endsWith("\r") ? this.feed("\n") : [];
    this.buffer = "";
    this.event = "";
    this.data = [];
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") {
      const message = this.data.length > 0 ? { event: this.event || "message", data: this.data.join("\n") } : undefined;
      this.event = "";
      this.data = [];
      return message;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    return undefined;
  }
}
