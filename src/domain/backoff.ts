/** Seconds before delivery `attempt + 1` of a queue message: base, 2×base, 4×base ..., at most `max`. */
export function backoffSeconds(attempt: number, baseSeconds: number, maxSeconds: number): number {
  return Math.min(maxSeconds, baseSeconds * 2 ** Math.max(0, attempt - 1));
}
