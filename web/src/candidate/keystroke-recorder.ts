// The keystroke recording of the candidate's editor (docs/web-app.md, "Keystroke recording"):
// every change of a file's document as CodeMirror made it (its change set, the time, the file,
// whether it was a paste or a drop), batched to POST .../keystrokes for the reviewers' playback.
// It is the candidate's own code in their own attempt, not telemetry, and it must never get in
// the way of the take-home: failures only stop the recording, and nothing here throws at the
// editor. The batching is framework-free (the clock, the timers and the request are given).
import { Annotation, type Extension, type Transaction } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { ApiError } from "../lib/errors";
import type { Backend } from "./backend";

/**
 * Marks a transaction as an edit from a live session's other side, so the recording keeps it
 * with `origin: "remote"` and its author's user id: dispatch it with
 * `annotations: remoteEdit.of({ author })`.
 */
export const remoteEdit = Annotation.define<{ author: string }>();

/** A change set as ChangeSet.toJSON() writes it. */
export type ChangeSetJson = (number | (number | string)[])[];

export interface RecordedEdit {
  path: string;
  /** When it was made: ms since the epoch, by this browser's clock. */
  t: number;
  changes: ChangeSetJson;
  doc_length_before: number;
  paste: boolean;
  origin: "candidate" | "remote";
  author: string | null;
}

/** An edit of `path` as the recording keeps it, or null for a transaction that changed no text. */
export function editOf(path: string, tr: Transaction, t: number): RecordedEdit | null {
  if (!tr.docChanged) return null;
  const remote = tr.annotation(remoteEdit);
  return {
    path,
    t,
    changes: tr.changes.toJSON() as ChangeSetJson,
    doc_length_before: tr.startState.doc.length,
    paste: tr.isUserEvent("input.paste") || tr.isUserEvent("input.drop"),
    origin: remote ? "remote" : "candidate",
    author: remote?.author ?? null,
  };
}

/** How a send ended: the recording's state, or the error's status (0: no answer). */
export type SendAnswer = { ok: true; recording: "on" | "capped" } | { ok: false; status: number };

export interface Timers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export interface BatcherOptions {
  send: (edits: RecordedEdit[], keepalive: boolean) => Promise<SendAnswer>;
  timers?: Timers;
  /** How long edits wait to be sent together. */
  intervalMs?: number;
  /** Edits per request, within the API's 500. */
  maxEdits?: number;
  /** Bytes of edits per request, within what a keepalive request may carry (64 KiB). */
  maxBytes?: number;
  /** Edits held while the service does not answer; past them the recording stops. */
  maxHeld?: number;
}

const defaultTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Batches edits to the service, one request at a time, in order: every `intervalMs`, at once
 * for the first edit of a file (so the service reads the file's text before the save queue
 * saves the edit into it), and when typing moves to another file. The recording stops for good
 * when the service says it is capped, or refuses for a reason that stays (the attempt is
 * submitted: 409; 401, 403, 404); a file whose batch is refused as inconsistent (422) is
 * recorded no further, since every later change set of it would be refused too.
 */
export class KeystrokeBatcher {
  private readonly pending: RecordedEdit[] = [];
  private readonly sent = new Set<string>();
  private readonly broken = new Set<string>();
  private readonly timers: Timers;
  private readonly intervalMs: number;
  private readonly maxEdits: number;
  private readonly maxBytes: number;
  private readonly maxHeld: number;
  private timer: unknown = null;
  private sending: Promise<void> | null = null;
  private lastPath: string | null = null;
  private backingOff = false;
  stopped = false;

  constructor(private readonly options: BatcherOptions) {
    this.timers = options.timers ?? defaultTimers;
    this.intervalMs = options.intervalMs ?? 2000;
    this.maxEdits = options.maxEdits ?? 200;
    this.maxBytes = options.maxBytes ?? 48 * 1024;
    this.maxHeld = options.maxHeld ?? 20_000;
  }

  get held(): number {
    return this.pending.length;
  }

  record(edit: RecordedEdit): void {
    if (this.stopped || this.broken.has(edit.path)) return;
    if (this.pending.length >= this.maxHeld) return this.stop();
    const switched = this.lastPath !== null && this.lastPath !== edit.path;
    this.lastPath = edit.path;
    this.pending.push(edit);
    if (switched || !this.sent.has(edit.path)) void this.flush();
    else if (this.timer === null) this.timer = this.timers.set(() => void this.flush(), this.intervalMs);
  }

  /** Sends what is held, batch after batch; `keepalive` for a page that is going away. */
  flush(keepalive = false): Promise<void> {
    // After a failure the held edits wait for their retry; only a page going away sends them sooner.
    if (this.backingOff && !keepalive) return this.sending ?? Promise.resolve();
    this.clearTimer();
    if (this.sending) return this.sending.then(() => (this.pending.length > 0 ? this.flush(keepalive) : undefined));
    if (this.stopped || this.pending.length === 0) return Promise.resolve();
    this.sending = this.sendBatches(keepalive).finally(() => (this.sending = null));
    return this.sending;
  }

  stop(): void {
    this.stopped = true;
    this.pending.length = 0;
    this.clearTimer();
  }

  private async sendBatches(keepalive: boolean): Promise<void> {
    // What is held when the flush begins; edits typed while it is on its way wait for the next
    // interval, or a fast typist would send a request per key, one after the other.
    let due = this.pending.length;
    while (!this.stopped && due > 0 && this.pending.length > 0) {
      const batch = takeBatch(this.pending, Math.min(this.maxEdits, due), this.maxBytes);
      due -= batch.length;
      for (const edit of batch) this.sent.add(edit.path);
      let answer: SendAnswer;
      try {
        answer = await this.options.send(batch, keepalive);
      } catch {
        answer = { ok: false, status: 0 };
      }
      const verdict = verdictOf(answer);
      if (verdict === "retry") {
        this.pending.unshift(...batch);
        this.backingOff = true;
        this.timer ??= this.timers.set(() => {
          this.timer = null;
          this.backingOff = false;
          void this.flush();
        }, this.intervalMs * 5);
        return;
      }
      if (verdict === "stop") return this.stop();
      if (verdict === "drop-files") {
        for (const edit of batch) this.broken.add(edit.path);
        removeWhere(this.pending, (e) => this.broken.has(e.path));
      }
    }
    if (!this.stopped && this.pending.length > 0 && this.timer === null) this.timer = this.timers.set(() => void this.flush(), this.intervalMs);
  }

  private clearTimer(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
  }
}

function removeWhere<T>(list: T[], drop: (item: T) => boolean): void {
  const kept = list.filter((item) => !drop(item));
  list.splice(0, list.length, ...kept);
}

/** The oldest edits up to `maxEdits` and about `maxBytes` (at least one), taken off `pending`. */
export function takeBatch(pending: RecordedEdit[], maxEdits: number, maxBytes: number): RecordedEdit[] {
  let bytes = 0;
  let n = 0;
  while (n < pending.length && n < maxEdits) {
    bytes += JSON.stringify(pending[n]).length;
    if (n > 0 && bytes > maxBytes) break;
    n++;
  }
  return pending.splice(0, n);
}

/** What a batch's answer means for the recording. */
export function verdictOf(answer: SendAnswer): "sent" | "retry" | "stop" | "drop-files" {
  if (answer.ok) return answer.recording === "capped" ? "stop" : "sent";
  const { status } = answer;
  if (status === 0 || status === 408 || status === 429 || status >= 500) return "retry";
  if (status === 422 || status === 413) return "drop-files";
  return "stop";
}

/** The recording of one editor's files: `extension(path)` goes into each file's editor state. */
export interface KeystrokeRecording {
  extension(path: string): Extension;
  flush(): Promise<void>;
  dispose(): void;
}

/** The workspace's recording of the attempt, sent with the page's credential; flushed with keepalive when the page goes away. */
export function attemptKeystrokes(backend: Backend, attemptId: string): KeystrokeRecording {
  const batcher = new KeystrokeBatcher({
    send: async (edits, keepalive) => {
      try {
        const answer = await backend.call(
          backend.client.POST("/api/v1/attempts/{attempt_id}/keystrokes", { params: { path: { attempt_id: attemptId } }, body: { edits }, keepalive }),
        );
        return { ok: true, recording: answer.recording };
      } catch (e) {
        return { ok: false, status: e instanceof ApiError ? e.status : 0 };
      }
    },
  });
  const onPageHide = () => void batcher.flush(true);
  window.addEventListener("pagehide", onPageHide);
  return {
    extension: (path) =>
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        const now = Date.now();
        for (const tr of update.transactions) {
          const edit = editOf(path, tr, now);
          if (edit) batcher.record(edit);
        }
      }),
    flush: () => batcher.flush(),
    dispose: () => {
      window.removeEventListener("pagehide", onPageHide);
      void batcher.flush(true).finally(() => batcher.stop());
    },
  };
}
