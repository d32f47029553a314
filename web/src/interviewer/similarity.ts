// The similarity evidence of a submission (docs/scoring.md, "Similarity"): how the score report
// page words the scores and lays out the matching regions. Evidence for the reviewer, never a
// deduction. Pure: ./similarity-section.tsx renders what this decides.
import type { components } from "../../../client/src/index";

export type Similarity = components["schemas"]["AttemptSimilarity"];
export type SimilarityRegion = components["schemas"]["SimilarityRegion"];
export type RegionSide = SimilarityRegion["left"];

/** 0.873 → "87%": whole percents read at a glance; the API keeps three decimals. */
export function percent(similarity: number): string {
  return `${Math.round(similarity * 100)}%`;
}

/**
 * Words for a similarity, by the bands the fingerprints give in practice: a copy with renames
 * scores near 1, independent solutions of one task near 0 (test/unit/similarity.test.ts).
 */
export function similarityWords(similarity: number): { level: "high" | "some" | "low"; text: string } {
  if (similarity >= 0.8) return { level: "high", text: "much of the code is the same, names and layout aside: read the regions" };
  if (similarity >= 0.3) return { level: "some", text: "some code is the same: read the regions" };
  return { level: "low", text: "little or nothing in common" };
}

/** "src/a.js, line 3" or "src/a.js, lines 3–17". */
export function sideLabel(side: RegionSide): string {
  return side.start_line === side.end_line ? `${side.path}, line ${side.start_line}` : `${side.path}, lines ${side.start_line}–${side.end_line}`;
}

/** The side's text numbered from its first line, numbers right-aligned; a cut text says so on a last line. */
export function numberedText(side: RegionSide): string {
  const lines = side.text.split("\n");
  const width = String(side.start_line + lines.length - 1).length;
  const out = lines.map((text, i) => `${String(side.start_line + i).padStart(width)} │ ${text}`);
  if (side.truncated) out.push(`${"⋮".padStart(width)} │ (cut here; the region runs to line ${side.end_line})`);
  return out.join("\n");
}

/** What the section says of an attempt's similarity as a whole. */
export function similaritySummary(view: Similarity): string {
  if (view.status === "pending") return "Being compared with the upstream solution and the other submissions; this takes seconds.";
  const others = view.peers.length;
  const upstream = view.upstream ? `${percent(view.upstream.similarity)} like the upstream solution.` : (view.upstream_missing ?? "Not compared with an upstream solution.");
  const peers = others === 0 ? "No other submission of the task to compare with." : `Compared with ${others} other submission${others === 1 ? "" : "s"} of the task.`;
  return `${upstream} ${peers}`;
}
