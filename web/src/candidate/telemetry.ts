// The workspace's activity for reviewers (docs/api.md, "Telemetry"): metadata only, never code
// text. Events are batched (every 10 s, or at once at 20) to POST /siem/events/batch, kept
// while offline or refused for a reason that passes, and dropped only as far as re-sending
// cannot help (telemetry-batches.ts). Framework-free: the clock, the timers, the ids and the
// request are given to it.
import { backoffMs } from "../lib/backoff";
import type { Timers } from "./save-queue";
import { batchVerdict, withoutFile, type BatchAnswer, type TelemetryEvent } from "./telemetry-batches";

type WithoutEnvelope<T> = T extends unknown ? Omit<T, "event_id" | "occurred_at" | "seq"> : never;
/** An event as the workspace reports it: the batcher adds the id, the time and the sequence number. */
export type TelemetryInput = WithoutEnvelope<TelemetryEvent>;

export interface TelemetryOptions {
  /** Sends one batch; throws an error with `status` (0: no answer), and for a 422 its `issues`, on failure. */
  send: (events: TelemetryEvent[]) => Promise<void>;
  newId: () => string;
  timers?: Timers;
  now?: () => number;
  online?: () => boolean;
  intervalMs?: number;
  /** A batch this large goes at once. */
  batchSize?: number;
  /** The most kept while the service cannot be reached; the oldest go first beyond it. */
  maxBuffered?: number;
  /** The least time between two batches (the API takes 30 a minute per attempt). */
  minGapMs?: number;
  backoff?: (failures: number) => number;
}

/** The API's most events per batch. */
const MAX_PER_REQUEST = 500;

function failureOf(error: unknown): BatchAnswer {
  const { status, issues } = error as { status?: unknown; issues?: unknown };
  return { ok: false, status: typeof status === "number" ? status : 0, issues: Array.isArray(issues) ? issues : [] };
}

const defaultTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class TelemetryBatcher {
  private buffer: TelemetryEvent[] = [];
  private seq = 0;
  private failures = 0;
  private timer: unknown;
  private timerAt = Number.POSITIVE_INFINITY;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private sending: Promise<void> | null = null;
  /** Lowered when the API found a batch too large (413): long paths make events bigger. */
  private perRequest = MAX_PER_REQUEST;
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly online: () => boolean;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxBuffered: number;
  private readonly minGapMs: number;
  private readonly backoff: (failures: number) => number;
  private stopped = false;

  constructor(private readonly options: TelemetryOptions) {
    this.timers = options.timers ?? defaultTimers;
    this.now = options.now ?? Date.now;
    this.online = options.online ?? (() => true);
    this.intervalMs = options.intervalMs ?? 10_000;
    this.batchSize = options.batchSize ?? 20;
    this.maxBuffered = options.maxBuffered ?? 2000;
    this.minGapMs = options.minGapMs ?? 3000;
    this.backoff = options.backoff ?? ((n) => backoffMs(n + 2));
  }

  /** Events waiting to be sent. */
  get buffered(): number {
    return this.buffer.length;
  }

  record(input: TelemetryInput, at: number = this.now()): void {
    if (this.stopped) return;
    const event = { ...input, event_id: this.options.newId(), occurred_at: new Date(at).toISOString(), seq: ++this.seq } as TelemetryEvent;
    this.buffer.push(event);
    if (this.buffer.length > this.maxBuffered) this.buffer.splice(0, this.buffer.length - this.maxBuffered);
    if (this.failures > 0 || !this.online()) return;
    const due = this.buffer.length >= this.batchSize ? Math.max(0, this.lastSentAt + this.minGapMs - this.now()) : this.intervalMs;
    this.scheduleIn(due);
  }

  /** Sends what is buffered now (before a submission, when the page is hidden). */
  async flush(): Promise<void> {
    this.cancel();
    while (this.sending) await this.sending;
    if (this.buffer.length === 0 || !this.online() || this.stopped) return;
    this.sending = this.sendOnce().finally(() => (this.sending = null));
    await this.sending;
  }

  setOnline(online: boolean): void {
    if (online && this.buffer.length > 0) {
      this.failures = 0;
      this.scheduleIn(0);
    }
  }

  /** Events about `path` lose it, once the file is deleted: the API takes paths of the attempt's files only. */
  forgetFile(path: string): void {
    this.buffer = withoutFile(this.buffer, path);
  }

  /** Stops for good: nothing more is recorded or sent (a token the API no longer takes). */
  stop(): void {
    this.stopped = true;
    this.cancel();
    this.buffer = [];
  }

  dispose(): void {
    this.cancel();
  }

  private scheduleIn(ms: number): void {
    const at = this.now() + ms;
    if (this.timer !== undefined && this.timerAt <= at) return;
    this.cancel();
    this.timerAt = at;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      void this.flush();
    }, ms);
  }

  private cancel(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private async sendOnce(): Promise<void> {
    const batch = this.buffer.slice(0, this.perRequest);
    this.lastSentAt = this.now();
    let answer: BatchAnswer = { ok: true };
    try {
      await this.options.send(batch);
    } catch (error) {
      answer = failureOf(error);
    }
    const verdict = batchVerdict(batch.length, answer);
    if (verdict.kind === "retry") {
      if (!this.online()) return;
      this.failures += 1;
      this.scheduleIn(this.backoff(this.failures));
      return;
    }
    this.failures = 0;
    if (verdict.kind === "stop") {
      this.stop();
      return;
    }
    // By id: forgetFile() may have replaced buffered events while the batch was on the way.
    const done = new Set<string>();
    if (verdict.kind === "done") for (const e of batch) done.add(e.event_id);
    if (verdict.kind === "resend") verdict.drop.forEach((i) => done.add(batch[i]!.event_id));
    if (verdict.kind === "split") this.perRequest = Math.ceil(batch.length / 2);
    this.buffer = this.buffer.filter((e) => !done.has(e.event_id));
    if (verdict.kind === "resend" || verdict.kind === "split" || this.buffer.length >= this.batchSize) this.scheduleIn(this.minGapMs);
    else if (this.buffer.length > 0) this.scheduleIn(this.intervalMs);
  }
}

/**
 * Typing as counts: keys that inserted text and deletions over windows of a few seconds, one
 * `typing_window` event each, per file. Starts at the first key; ends after `windowMs`, when
 * another file is typed in, or on close().
 */
export class TypingWindows {
  private window: { start: number; file: string | undefined; keystrokes: number; deletions: number } | null = null;
  private timer: unknown;
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly windowMs: number;

  constructor(
    private readonly emit: (input: TelemetryInput, at: number) => void,
    options: { timers?: Timers; now?: () => number; windowMs?: number } = {},
  ) {
    this.timers = options.timers ?? defaultTimers;
    this.now = options.now ?? Date.now;
    this.windowMs = options.windowMs ?? 5000;
  }

  /** One key: `insert` typed text, `delete` removed some. `file` undefined: a file the API does not know yet. */
  key(file: string | undefined, kind: "insert" | "delete"): void {
    if (this.window && this.window.file !== file) this.close();
    if (!this.window) {
      this.window = { start: this.now(), file, keystrokes: 0, deletions: 0 };
      this.timer = this.timers.set(() => this.close(), this.windowMs);
    }
    if (kind === "insert") this.window.keystrokes += 1;
    else this.window.deletions += 1;
  }

  close(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    const w = this.window;
    this.window = null;
    if (!w) return;
    const input: TelemetryInput = {
      kind: "typing_window",
      window_ms: Math.min(600_000, Math.max(1, this.now() - w.start)),
      keystrokes: w.keystrokes,
      deletions: w.deletions,
      ...(w.file !== undefined ? { file_path: w.file } : {}),
    };
    this.emit(input, w.start);
  }
}

/** Lines of a text as an editor counts them: one more than its line breaks. */
export function lineCount(text: string): number {
  let lines = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines += 1;
  return lines;
}
