/** One benchmark figure; `npm run bench` prints one of these as JSON per line. */
export interface Metric {
  metric: string;
  value: number;
  unit: string;
  [detail: string]: unknown;
}
export type Emit = (m: Metric) => void;

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
