// The organization analytics (docs/api.md, "Analytics") as the figures the charts draw. Pure.
import type { components } from "../../../client/src/index";
import { SUBSCORES as SUBSCORE_NAMES, type SubscoreName } from "../../../protocol/assessment-rules";

export type Analytics = components["schemas"]["OrganizationAnalytics"];
export type Distribution = components["schemas"]["AnalyticsDistribution"];
type Funnel = Analytics["funnel"];

export interface FunnelRow {
  key: keyof Funnel;
  label: string;
  value: number;
  /** Share of the step before it in its cohort, 0–100 to one decimal; null at a cohort's start or after a zero. */
  ofPrevious: number | null;
}

// Two cohorts (invitations, attempts): "attempts" starts the second, so it is no share of "accepted".
const FUNNEL: { key: keyof Funnel; label: string; after: keyof Funnel | null }[] = [
  { key: "invited", label: "Invited", after: null },
  { key: "accepted", label: "Accepted", after: "invited" },
  { key: "attempts", label: "Attempts", after: null },
  { key: "started", label: "Started", after: "attempts" },
  { key: "submitted", label: "Submitted", after: "started" },
  { key: "scored", label: "Scored", after: "submitted" },
];

const share = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : null);

export function funnelRows(funnel: Funnel): FunnelRow[] {
  return FUNNEL.map(({ key, label, after }) => ({ key, label, value: funnel[key], ofPrevious: after ? share(funnel[key], funnel[after]) : null }));
}

export const PERCENTILES = [
  { key: "p10", label: "10th" },
  { key: "p25", label: "25th" },
  { key: "p50", label: "Median" },
  { key: "p75", label: "75th" },
  { key: "p90", label: "90th" },
] as const;

/** A distribution's percentiles in PERCENTILES' order, divided by `per` (60 turns seconds into minutes), to one decimal. */
export function percentiles(d: Distribution, per = 1): (number | null)[] {
  return PERCENTILES.map(({ key }) => {
    const v = d[key];
    return v === null ? null : Math.round((10 * v) / per) / 10;
  });
}

const SUBSCORE_LABELS: Record<SubscoreName, string> = {
  correctness: "Correctness",
  test_coverage: "Test coverage",
  code_quality: "Code quality",
  behavior: "Behavior",
  communication: "Communication",
};

/** The subscores in the rubric's order (the one list, protocol/assessment-rules.ts), with their labels. */
export const SUBSCORES = SUBSCORE_NAMES.map((key) => ({ key, label: SUBSCORE_LABELS[key] }));

export type SubscoreKey = SubscoreName;

/** The overall score and each subscore as one row of a distribution table. */
export function scoreRows(scores: Analytics["scores"]): { label: string; d: Distribution }[] {
  return [{ label: "Overall", d: scores.overall }, ...SUBSCORES.map(({ key, label }) => ({ label, d: scores.subscores[key] }))];
}

/**
 * The days the filter's fields show: the address's, else those of the window the report
 * covers (the API's default when the address names none), so the fields never sit empty
 * beside the range the page names. Before the report is there, only the address's.
 */
export function filterDates(address: { from: string; to: string }, window: { from: string; to: string } | undefined): { from: string; to: string } {
  return { from: address.from || (window?.from ?? ""), to: address.to || (window?.to ?? "") };
}

/** A query string for the analytics page from its filter form; empty fields are left out. */
export function analyticsQuery(filter: { from: string; to: string; taskId: string }): string {
  const q = new URLSearchParams();
  if (filter.from) q.set("from", filter.from);
  if (filter.to) q.set("to", filter.to);
  if (filter.taskId) q.set("task_id", filter.taskId);
  const s = q.toString();
  return s ? `?${s}` : "";
}
