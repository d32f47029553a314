/**
 * Which requests the Worker writes its own `request` log line for (docs/api.md, "Request ids,
 * logs, CORS"). Workers Logs records every invocation already (method, URL, status, duration,
 * headers); the Worker's line adds the route template and the user, which matter where
 * something changed or went wrong. Successful quick reads are most of the traffic and the
 * invocation log tells all there is to them, while a line per read costs every one of them.
 */
export const SLOW_REQUEST_MS = 1_000;

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

export function writesRequestLine(method: string, status: number, durationMs: number): boolean {
  return !READS.has(method) || status >= 400 || durationMs >= SLOW_REQUEST_MS;
}
