/** Exponential backoff with jitter for reconnects and polls: 0.5 s, 1 s, 2 s ... up to 30 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + random() * (base / 2));
}
