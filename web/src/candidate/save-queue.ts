// Saving the candidate's edits as changes of the attempt's overlay (PATCH .../changes): a
// debounced, batched queue that never loses a keystroke. At most one save is on the way; the
// next carries everything pending, and typing, however fast and in however many files, makes at
// most one request per debounce window (saveDueAt), so a slow server cannot drive a save per
// round trip into the rate limit. Every edit is written to storage (the
// browser's localStorage) before anything else, and removed only once the server has it, so a
// reload, a crash or a lost connection leaves the unsaved content to be saved on the next load.
// Framework-free: the clock, the timers, the storage and the request are given to it.
import { backoffMs } from "../lib/backoff";

export type Change = { op: "upsert"; content: string } | { op: "delete" };

/** The part of the Web Storage interface the queue uses. */
export interface SaveStorage {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface Timers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export type SaveState =
  | { kind: "saved" }
  /** Edits wait for the typing to pause. */
  | { kind: "unsaved" }
  | { kind: "saving" }
  /** No connection: kept in this browser until it returns. */
  | { kind: "offline" }
  /** The last save failed for a reason that may pass; tried again at `retryAt`. */
  | { kind: "retrying"; message: string; retryAt: number }
  /** The API refused the changes (too large, a bad path): tried again after the next edit. */
  | { kind: "failed"; message: string }
  /** The attempt takes no more changes (submitted, or not started): a 409. */
  | { kind: "locked"; message: string };

export interface SaveSnapshot {
  state: SaveState;
  /** Paths with changes the server does not have yet. */
  unsaved: string[];
  /** False when this browser's storage refused the last write (full or disabled): a reload would lose it. */
  stored: boolean;
}

export interface SaveQueueOptions {
  attemptId: string;
  /** Null when the browser gives no storage (private mode may): edits are then kept in memory only. */
  storage: SaveStorage | null;
  /** Sends one PATCH; throws an error with `status` (0: no answer) and a message on failure. */
  send: (changes: Record<string, Change>) => Promise<void>;
  timers?: Timers;
  now?: () => number;
  online?: () => boolean;
  /** Quiet time after the last edit before saving, and the least time between two saves while typing. */
  debounceMs?: number;
  /** The longest an edit waits while typing goes on. */
  maxWaitMs?: number;
  backoff?: (failures: number) => number;
  onChange?: (snapshot: SaveSnapshot) => void;
  /** After a successful save, with what it saved. */
  onSaved?: (changes: Record<string, Change>) => void;
}

interface Entry {
  change: Change;
  version: number;
}

const PREFIX = "assay.unsaved/";

const defaultTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function failureOf(error: unknown): { status: number; message: string; retryAfterSeconds?: number } {
  const e = error as { status?: unknown; message?: unknown; retryAfterSeconds?: unknown };
  return {
    status: typeof e?.status === "number" ? e.status : 0,
    message: typeof e?.message === "string" ? e.message : String(error),
    retryAfterSeconds: typeof e?.retryAfterSeconds === "number" ? e.retryAfterSeconds : undefined,
  };
}

/** Whether trying the same request again later may succeed: no answer, a timeout, a rate limit, a server failure. */
function passing(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

export class SaveQueue {
  private readonly pending = new Map<string, Entry>();
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly online: () => boolean;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private readonly backoff: (failures: number) => number;
  private readonly prefix: string;
  private version = 0;
  private failures = 0;
  private timer: unknown;
  /** When the oldest edit not yet sent was made; null when none waits. */
  private waitingSince: number | null = null;
  private lastEditAt = Number.NEGATIVE_INFINITY;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private sending: Promise<boolean> | null = null;
  private state: SaveState = { kind: "saved" };
  private stored = true;
  private disposed = false;

  constructor(private readonly options: SaveQueueOptions) {
    this.timers = options.timers ?? defaultTimers;
    this.now = options.now ?? Date.now;
    this.online = options.online ?? (() => true);
    this.debounceMs = options.debounceMs ?? 1500;
    this.maxWaitMs = options.maxWaitMs ?? 10_000;
    this.backoff = options.backoff ?? ((n) => backoffMs(n + 1));
    this.prefix = `${PREFIX}${options.attemptId}/`;
  }

  snapshot(): SaveSnapshot {
    return { state: this.state, unsaved: [...this.pending.keys()].sort(), stored: this.stored };
  }

  hasUnsaved(): boolean {
    return this.pending.size > 0;
  }

  /** The change of `path` not yet saved, if any. */
  unsavedChange(path: string): Change | undefined {
    return this.pending.get(path)?.change;
  }

  /**
   * Loads the changes a previous page left unsaved in storage; they are queued to be saved
   * (call flush()), and the page shows them instead of the server's content.
   */
  restore(): Map<string, Change> {
    const found = new Map<string, Change>();
    const storage = this.options.storage;
    if (!storage) return found;
    for (const key of this.storageKeys()) {
      const change = parseChange(storage.getItem(key));
      const path = key.slice(this.prefix.length);
      if (change && path) {
        found.set(path, change);
        this.pending.set(path, { change, version: ++this.version });
      } else storage.removeItem(key);
    }
    if (found.size > 0) this.setState({ kind: "unsaved" });
    return found;
  }

  /** Forgets every unsaved change, here and in storage: for an attempt that takes no more. */
  discard(): void {
    this.pending.clear();
    for (const key of this.storageKeys()) this.options.storage?.removeItem(key);
    this.cancelTimer();
  }

  /** Records an edit: into storage at once, to the server after the typing pauses. False once the attempt is locked. */
  edit(path: string, change: Change): boolean {
    if (this.state.kind === "locked" || this.disposed) return false;
    this.pending.set(path, { change, version: ++this.version });
    this.store(path, change);
    this.lastEditAt = this.now();
    this.waitingSince ??= this.lastEditAt;
    // Retrying has its timer, and a save on the way schedules the next when it ends.
    if (this.state.kind === "retrying" || this.sending) {
      this.emit();
      return true;
    }
    if (!this.online()) this.setState({ kind: "offline" });
    else {
      this.setState({ kind: "unsaved" });
      this.schedule();
    }
    return true;
  }

  /**
   * Saves now what was edited before the call (before a run, a submission, a file switch): waits
   * for a save on the way, then sends at most once more, carrying everything pending. Edits made
   * meanwhile ride along but are not waited for, so typing cannot keep a flush going. True once
   * the server has everything edited before the call.
   */
  async flush(): Promise<boolean> {
    const upTo = this.version;
    for (;;) {
      if (![...this.pending.values()].some((e) => e.version <= upTo)) return true;
      if (this.disposed || this.state.kind === "locked") return false;
      if (!this.sending) return this.start();
      if (!(await this.sending)) return false;
    }
  }

  /** Follows the connection: saving waits while offline and resumes when it returns. */
  setOnline(online: boolean): void {
    if (this.disposed || this.state.kind === "locked") return;
    if (!online) {
      if (this.pending.size > 0 && this.state.kind !== "saving") this.setState({ kind: "offline" });
      return;
    }
    if (this.pending.size > 0 && !this.sending && (this.state.kind === "offline" || this.state.kind === "retrying")) {
      this.failures = 0;
      void this.start();
    }
  }

  dispose(): void {
    this.disposed = true;
    this.cancelTimer();
  }

  private storageKeys(): string[] {
    const storage = this.options.storage;
    if (!storage) return [];
    const keys: string[] = [];
    for (let i = 0; i < storage.length; i++) {
      const key = storage.key(i);
      if (key?.startsWith(this.prefix)) keys.push(key);
    }
    return keys;
  }

  private store(path: string, change: Change): void {
    try {
      this.options.storage?.setItem(this.prefix + path, JSON.stringify(change));
      this.stored = true;
    } catch {
      this.stored = false;
    }
  }

  private unstore(path: string): void {
    try {
      this.options.storage?.removeItem(this.prefix + path);
    } catch {
      // A storage that cannot remove cannot hold anything stale either.
    }
  }

  private schedule(): void {
    const times = { lastEditAt: this.lastEditAt, waitingSince: this.waitingSince ?? this.lastEditAt, lastSentAt: this.lastSentAt };
    this.setTimer(saveDueAt(times, { debounceMs: this.debounceMs, maxWaitMs: this.maxWaitMs }) - this.now());
  }

  private setTimer(ms: number): void {
    this.cancelTimer();
    this.timer = this.timers.set(
      () => {
        this.timer = undefined;
        if (!this.sending && this.pending.size > 0 && !this.disposed && this.state.kind !== "locked") void this.start();
      },
      Math.max(0, ms),
    );
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
  }

  /** One request with everything pending; the only place a save starts, so one is on the way at most. */
  private start(): Promise<boolean> {
    this.cancelTimer();
    if (!this.online()) {
      this.setState({ kind: "offline" });
      return Promise.resolve(false);
    }
    const sending = this.sendOnce().finally(() => (this.sending = null));
    this.sending = sending;
    return sending;
  }

  private async sendOnce(): Promise<boolean> {
    const batch = new Map(this.pending);
    const changes: Record<string, Change> = {};
    for (const [path, entry] of batch) changes[path] = entry.change;
    this.waitingSince = null;
    this.lastSentAt = this.now();
    this.setState({ kind: "saving" });
    try {
      await this.options.send(changes);
    } catch (error) {
      this.waitingSince ??= this.now();
      this.failed(failureOf(error));
      return false;
    }
    for (const [path, entry] of batch) {
      if (this.pending.get(path)?.version === entry.version) {
        this.pending.delete(path);
        this.unstore(path);
      }
    }
    if (this.pending.size === 0) this.waitingSince = null;
    else this.waitingSince ??= this.now();
    this.failures = 0;
    this.setState(this.pending.size > 0 ? { kind: "unsaved" } : { kind: "saved" });
    this.options.onSaved?.(changes);
    if (this.pending.size > 0) {
      if (this.online()) this.schedule();
      else this.setState({ kind: "offline" });
    }
    return true;
  }

  private failed(failure: { status: number; message: string; retryAfterSeconds?: number }): void {
    if (failure.status === 409) {
      this.cancelTimer();
      this.setState({ kind: "locked", message: failure.message });
      return;
    }
    if (!passing(failure.status)) {
      this.setState({ kind: "failed", message: failure.message });
      return;
    }
    if (!this.online()) {
      this.setState({ kind: "offline" });
      return;
    }
    this.failures += 1;
    const delay = Math.max(this.backoff(this.failures), (failure.retryAfterSeconds ?? 0) * 1000);
    this.setTimer(delay);
    this.setState({ kind: "retrying", message: failure.message, retryAt: this.now() + delay });
  }

  private setState(state: SaveState): void {
    this.state = state;
    this.emit();
  }

  private emit(): void {
    this.options.onChange?.(this.snapshot());
  }
}

/**
 * When the next save is due while typing: after a pause of `debounceMs`, or `maxWaitMs` after the
 * oldest unsent edit if typing goes on, and never sooner than `debounceMs` after the last save
 * started. Times in ms on one clock.
 */
export function saveDueAt(
  times: { lastEditAt: number; waitingSince: number; lastSentAt: number },
  { debounceMs, maxWaitMs }: { debounceMs: number; maxWaitMs: number },
): number {
  return Math.max(Math.min(times.lastEditAt + debounceMs, times.waitingSince + maxWaitMs), times.lastSentAt + debounceMs);
}

function parseChange(raw: string | null): Change | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<Change> & { content?: unknown };
    if (value.op === "delete") return { op: "delete" };
    if (value.op === "upsert" && typeof value.content === "string") return { op: "upsert", content: value.content };
  } catch {
    // Not ours, or cut short: nothing to restore.
  }
  return null;
}
