// The comparison `npm run bench -- compare REF` prints (scripts/bench/compare.ts): pure, so
// its pairing and arithmetic are tested on their own.
import type { Metric } from "../bench/metrics";

export interface Compared {
  metric: string;
  unit: string;
  ref: number;
  this: number;
  /** This tree's median over REF's. */
  ratio: number;
  [detail: string]: unknown;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Math.round(value * 100) / 100;
};

/**
 * What names a figure across runs: everything but its value and what a run saw besides it (the
 * object-valued details, as the import rows' phases, which differ from run to run: taken for
 * part of the name, they kept every such row from being paired, and compare printed none).
 */
const keyOf = ({ value: _value, ...rest }: Metric) => JSON.stringify(Object.entries(rest).filter(([, v]) => typeof v !== "object" || v === null));

/** The medians of each figure both sides printed, with their ratio, in the order REF printed them. */
export function compareRuns(ref: Metric[][], here: Metric[][]): Compared[] {
  const collect = (runs: Metric[][]) => {
    const byKey = new Map<string, { metric: Metric; values: number[] }>();
    for (const m of runs.flat()) {
      const key = keyOf(m);
      const entry = byKey.get(key) ?? { metric: m, values: [] };
      entry.values.push(m.value);
      byKey.set(key, entry);
    }
    return byKey;
  };
  const refs = collect(ref);
  const heres = collect(here);
  const out: Compared[] = [];
  for (const [key, { metric, values }] of refs) {
    const mine = heres.get(key);
    if (!mine) continue;
    const { value: _value, metric: name, unit, ...details } = metric;
    const a = median(values);
    const b = median(mine.values);
    out.push({ metric: name, unit, ref: a, this: b, ratio: a === 0 ? (b === 0 ? 1 : Number.POSITIVE_INFINITY) : Math.round((b / a) * 1000) / 1000, ...details });
  }
  return out;
}
