// The figures of `npm run bench -- load` (scripts/bench/load.ts) that are arithmetic on what the
// candidates sent and what the API answered: pure, so they are tested on their own.
import { percentile } from "../bench/metrics";

/** One save the API acknowledged (200): each path it wrote, with the content's SHA-256 (hex), or null for a deletion. */
export type AcknowledgedSave = Readonly<Record<string, string | null>>;

/** One entry of a submitted attempt's frozen overlay, as GET .../changes lists it. */
export interface FrozenEntry {
  path: string;
  op: "upsert" | "delete";
  sha256: string | null;
}

/**
 * How many acknowledged saves the frozen submission does not hold. A save's write to a path
 * is owed to the submission unless a later acknowledged save wrote that path again; a save
 * counts as lost once when any of its owed writes is missing or holds other content. Saves
 * that were never acknowledged (a 5xx, no answer) are owed nothing: the client still had them.
 */
export function lostSaves(acknowledged: readonly AcknowledgedSave[], frozen: readonly FrozenEntry[]): number {
  const held = new Map(frozen.map((e) => [e.path, e.op === "delete" ? null : e.sha256]));
  const lastWriter = new Map<string, number>();
  acknowledged.forEach((save, i) => {
    for (const path of Object.keys(save)) lastWriter.set(path, i);
  });
  return acknowledged.filter((save, i) =>
    Object.entries(save).some(([path, sha256]) => lastWriter.get(path) === i && (!held.has(path) || held.get(path) !== sha256)),
  ).length;
}

/** p50 and p95 of latencies, rounded to whole units; NaN for none. */
export function latencyPercentiles(values: readonly number[]): { p50: number; p95: number } {
  return { p50: Math.round(percentile([...values], 50)), p95: Math.round(percentile([...values], 95)) };
}

/** The latest of ISO timestamps minus `since` (Unix ms), in seconds with one decimal; NaN for none. */
export function secondsToLast(isoTimes: readonly string[], since: number): number {
  if (isoTimes.length === 0) return Number.NaN;
  const last = Math.max(...isoTimes.map((t) => Date.parse(t)));
  return Math.round((last - since) / 100) / 10;
}

/**
 * The `duration_ms` of the Worker's own `request` log lines (src/app.ts) for one method and
 * route template, from a stack's output: the time inside the Worker, without the wait for it.
 */
export function requestDurations(output: string, method: string, route: string): number[] {
  const durations: number[] = [];
  for (const match of output.matchAll(/\{"level":"info","msg":"request",[^\n]*\}/g)) {
    const line = JSON.parse(match[0]) as { method?: string; route?: string; duration_ms?: number };
    if (line.method === method && line.route === route && typeof line.duration_ms === "number") durations.push(line.duration_ms);
  }
  return durations;
}

/**
 * The requests the local Worker answered, by method and path with ids and queries left out,
 * most first, from wrangler's own line per request in a stack's output: what else the Worker
 * spends its one thread on while candidates save.
 */
export function requestMix(output: string): [string, number][] {
  const mix = new Map<string, number>();
  for (const [, method, path] of output.matchAll(/\[wrangler:info\] ([A-Z]+) (\S+)/g)) {
    const route = path!
      .split("?")[0]!
      .split("/")
      .map((segment) => (/\d/.test(segment) && /^[\w.%-]{16,}$/.test(segment) ? ":id" : segment))
      .join("/");
    const key = `${method} ${route}`;
    mix.set(key, (mix.get(key) ?? 0) + 1);
  }
  return [...mix].sort((a, b) => b[1] - a[1]);
}
