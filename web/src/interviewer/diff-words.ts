// The submission's diff on the score report, in words (GET .../evaluation/review/diff): what
// happened to each file, why its text is not shown, and the mark of a file the hidden-test run
// kept at the task's version. Pure, so the words are unit-tested.
import type { components } from "../../../client/src/index";

export type DiffFile = components["schemas"]["ReviewDiffFile"];

/** The words of a file the hidden-test run used at the task's version, whatever the candidate saved. */
export const KEPT_AT_TASK_VERSION = "Kept at the task's version in the hidden-test run: this change does not count.";

export function fileStatusText(file: Pick<DiffFile, "status">): string {
  switch (file.status) {
    case "added":
      return "added";
    case "deleted":
      return "deleted";
    case "unchanged":
      return "saved as the task has it";
    default:
      return "changed";
  }
}

/** Why a file's two versions are not shown side by side; null when they are. */
export function contentNote(file: Pick<DiffFile, "content" | "base_bytes" | "submitted_bytes">, limits = { fileKiB: 256 }): string | null {
  switch (file.content) {
    case "text":
      return null;
    case "binary":
      return "A binary file: there is no text to compare.";
    case "too_large":
      return `Larger than ${limits.fileKiB} KiB: too large to show here; the replay has its saves.`;
    case "omitted":
      return "Not shown: the diff is already as long as one page shows. The replay has its saves.";
    case "base_unavailable":
      return "The task's version of this file could not be read.";
  }
}

/** "3 files: 1 added, 2 changed; 1 kept at the task's version" */
export function diffSummary(files: readonly Pick<DiffFile, "status" | "kept_at_task_version">[]): string {
  if (files.length === 0) return "The submission changed no file.";
  const counts = new Map<string, number>();
  for (const f of files) counts.set(fileStatusText(f), (counts.get(fileStatusText(f)) ?? 0) + 1);
  const parts = [...counts].map(([words, n]) => `${n} ${words}`);
  const kept = files.filter((f) => f.kept_at_task_version).length;
  const head = `${files.length} ${files.length === 1 ? "file" : "files"}: ${parts.join(", ")}`;
  return kept > 0 ? `${head}; ${kept} kept at the task's version in the hidden-test run` : head;
}

/** The two texts to compare: a side that does not exist (an added or a deleted file) is empty. */
export function diffTexts(file: Pick<DiffFile, "base" | "submitted">): { base: string; submitted: string } {
  return { base: file.base ?? "", submitted: file.submitted ?? "" };
}
