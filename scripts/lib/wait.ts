// Waiting for something one can observe, with a deadline, as a client polls an API: the tests
// (Node, workerd and the runner's), the demo client and the dev stack all wait through here.

/** A pause. Not a way to wait for an effect (poll for it): for a clock to pass a point, or a backoff. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export interface Patience {
  /** How long to keep probing before failing. */
  timeoutMs: number;
  /** The pause after the first probe that found nothing; 50 ms when not given. */
  intervalMs?: number;
  /** Each pause doubles the last one up to this (a client backing off); no backoff when not given. */
  maxIntervalMs?: number;
}

/**
 * Probes until `probe` returns something other than undefined, and resolves with it; fails
 * naming `what` once `timeoutMs` has passed. A probe that throws ends the wait with its error.
 */
export async function poll<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, patience: Patience): Promise<T> {
  const deadline = Date.now() + patience.timeoutMs;
  let interval = patience.intervalMs ?? 50;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`waited ${patience.timeoutMs} ms for ${what}`);
    await sleep(Math.min(interval, left));
    interval = Math.min(interval * 2, patience.maxIntervalMs ?? interval);
  }
}

/** Probes until `ready` holds; fails naming `what` once `timeoutMs` has passed. */
export async function waitUntil(what: string, ready: () => boolean | Promise<boolean>, patience: Patience): Promise<void> {
  await poll(what, async () => ((await ready()) ? true : undefined), patience);
}

/**
 * Wakes what waits on state that events change (a socket's messages, a program's output): a
 * waiter looks again on each `notify()`, and once a second besides in case a change went
 * unsignalled, until its check finds something, `ended` says nothing more will come, or the
 * deadline passes.
 */
export class Changes {
  private readonly waiters: Array<() => void> = [];

  notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves with `check`'s first value; fails with `failure(ended)`'s message when it ended or the time ran out. */
  async until<T>(check: () => T | undefined, opts: { timeoutMs: number; ended?: () => boolean; failure: (ended: boolean) => string }): Promise<T> {
    const deadline = Date.now() + opts.timeoutMs;
    for (;;) {
      const found = check();
      if (found !== undefined) return found;
      if (opts.ended?.()) throw new Error(opts.failure(true));
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(opts.failure(false));
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, Math.min(left, 1000));
      });
    }
  }
}
