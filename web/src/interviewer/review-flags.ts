// The review flags of a score report (docs/scoring.md, "Threat model", 5): changed source lines
// a reviewer should read, grouped by kind, each with its file and numbered lines. Evidence for
// the reviewer, not a deduction. Pure: the report page renders what this decides.
import type { components } from "../../../client/src/index";

export type ReviewFlag = components["schemas"]["ReviewFlag"];
export type ReviewFlagKind = ReviewFlag["kind"];

/** The kinds in the order the page shows them, with their headings. */
export const REVIEW_FLAG_KINDS: readonly { kind: ReviewFlagKind; title: string }[] = [
  { kind: "framework_internals", title: "Reaches into the test framework" },
  { kind: "patches_builtins", title: "Patches built-in modules" },
  { kind: "reads_test_files", title: "Reads or watches the tests at run time" },
  { kind: "writes_outside_workspace", title: "Writes outside the workspace" },
  { kind: "ends_process", title: "Ends the process" },
];

export interface ReviewFlagGroup {
  kind: ReviewFlagKind;
  title: string;
  flags: ReviewFlag[];
}

/** The flags by kind, kinds in a fixed order, empty kinds left out; a kind the page does not know yet comes last under its own name. */
export function reviewFlagGroups(flags: readonly ReviewFlag[] | undefined): ReviewFlagGroup[] {
  const all = flags ?? [];
  const known = REVIEW_FLAG_KINDS.map(({ kind, title }) => ({ kind, title, flags: all.filter((f) => f.kind === kind) }));
  const unknownKinds = [...new Set(all.map((f) => f.kind).filter((k) => !REVIEW_FLAG_KINDS.some((r) => r.kind === k)))];
  const unknown = unknownKinds.map((kind) => ({ kind, title: String(kind).replaceAll("_", " "), flags: all.filter((f) => f.kind === kind) }));
  return [...known, ...unknown].filter((g) => g.flags.length > 0);
}

/**
 * The lines as a numbered listing: numbers right-aligned to the widest, a bar, the text; a gap
 * between lines that do not follow each other is shown as a line of its own ("⋮").
 */
export function numberedLines(lines: ReviewFlag["lines"]): string {
  const width = Math.max(1, ...lines.map((l) => String(l.line).length));
  const out: string[] = [];
  lines.forEach((l, i) => {
    const previous = lines[i - 1];
    if (previous && l.line > previous.line + 1) out.push(`${"⋮".padStart(width)} │`);
    out.push(`${String(l.line).padStart(width)} │ ${l.text}`);
  });
  return out.join("\n");
}

/** "line 3", "lines 3, 7", "lines 3, 7 and 12 more". */
export function lineSummary(flag: Pick<ReviewFlag, "lines" | "more_lines">): string {
  const numbers = flag.lines.map((l) => l.line).join(", ");
  const more = flag.more_lines > 0 ? ` and ${flag.more_lines} more` : "";
  return `${flag.lines.length + flag.more_lines === 1 ? "line" : "lines"} ${numbers}${more}`;
}
