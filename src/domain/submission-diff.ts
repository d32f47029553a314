/**
 * A submission by diff (docs/api.md, "Submit by diff"): the submit payload's `git_diff`, read
 * with the project's git diff reader (patch-split.ts) and applied to the task's base files.
 *
 * Hunks apply strictly: each at exactly the lines its header names, every context and removed
 * line equal to the base's, byte for byte (a CR before the newline included), and no fuzz. A
 * diff against the base needs no more, and a diff that does not fit is not against the base;
 * it also keeps the work a hostile diff can cause to one pass over its own lines.
 */
import { invalid, type FieldIssue, type Outcome } from "./outcome";
import { overlayPathProblem } from "./overlay";
import { changedPaths, readDiff, type DiffSection, type Hunk } from "./patch-split";

const DIFF_LOC = ["body", "git_diff"];

/** A diff whose form and paths are fine, to be applied to the base files it names. */
export interface CheckedDiff {
  sections: DiffSection[];
  /**
   * Base paths to read: what modifications, removals, renames and copies start from, and
   * where additions, renames and copies go (those must not exist yet).
   */
  basePaths: string[];
}

/** A file of the submission: its whole new content, or its removal. */
export type SubmittedFile = { path: string; op: "upsert"; content: Uint8Array } | { path: string; op: "delete" };


/**
 * Reads `diff` and checks what needs no base: its form, that it carries text only, that its
 * paths stay inside the tree, that it changes no hidden test, and that `changedFiles` (when
 * sent) lists exactly the paths it changes. Every problem of the paths and lists at once.
 */
export function checkSubmissionDiff(
  diff: string,
  opts: { hiddenTests: ReadonlySet<string>; changedFiles: readonly string[] | undefined },
): Outcome<CheckedDiff> {
  // git writes its headers with LF whatever the files' line ends; CRs there mean the whole text was converted on the way.
  if (/^diff --git [^\n]*\r$/m.test(diff)) {
    return invalid([
      {
        loc: DIFF_LOC,
        msg: "git_diff has CRLF line ends in its headers: send git diff's output unchanged (a CR inside a file's lines is kept as content)",
        type: "invalid_diff",
      },
    ]);
  }
  const read = readDiff(diff);
  if (!read.ok) return invalid([{ loc: DIFF_LOC, msg: `git_diff is not a git diff that can be read: ${read.reason}`, type: "invalid_diff" }]);

  const issues: FieldIssue[] = [];
  const changed = new Set<string>();
  const basePaths = new Set<string>();
  for (const { file } of read.value) {
    for (const path of file.previousPath === undefined ? [file.path] : [file.previousPath, file.path]) {
      const problem = overlayPathProblem(path);
      if (problem) issues.push({ loc: DIFF_LOC, msg: `${JSON.stringify(path)}: ${problem}`, type: "invalid_path" });
      basePaths.add(path);
    }
    if (file.binary) {
      issues.push({
        loc: DIFF_LOC,
        msg: `${file.path}: binary diffs are not taken; submit binary files through the changes overlay (PATCH .../changes) with an empty git_diff`,
        type: "binary_diff",
      });
    }
    for (const path of changedPaths(file)) {
      changed.add(path);
      if (opts.hiddenTests.has(path)) {
        issues.push({ loc: DIFF_LOC, msg: `${path} is a hidden test of the task; git_diff may not change it`, type: "hidden_test" });
      }
    }
  }
  if (opts.changedFiles !== undefined) issues.push(...changedFilesIssues(opts.changedFiles, changed));
  return issues.length > 0 ? invalid(issues) : { ok: true, value: { sections: read.value, basePaths: [...basePaths].sort() } };
}

/** changed_files must be the set of paths the diff changes: a rename both of its paths, a copy its new one. */
function changedFilesIssues(changedFiles: readonly string[], changed: ReadonlySet<string>): FieldIssue[] {
  const listed = new Set(changedFiles);
  const extra = changedFiles.flatMap((path, i): FieldIssue[] =>
    changed.has(path) ? [] : [{ loc: ["body", "changed_files", i], msg: `${path} is not changed by git_diff`, type: "not_in_diff" }],
  );
  const missing = [...changed]
    .filter((path) => !listed.has(path))
    .map((path): FieldIssue => ({ loc: ["body", "changed_files"], msg: `${path} is changed by git_diff but not listed`, type: "missing_from_list" }));
  return [...extra, ...missing];
}

/** Text as lines without their "\n", and whether the last line has one. */
interface Lines {
  lines: string[];
  endsWithNewline: boolean;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function toLines(text: string): Lines {
  if (text === "") return { lines: [], endsWithNewline: true };
  const endsWithNewline = text.endsWith("\n");
  return { lines: (endsWithNewline ? text.slice(0, -1) : text).split("\n"), endsWithNewline };
}

function fromLines({ lines, endsWithNewline }: Lines): string {
  return lines.length === 0 ? "" : lines.join("\n") + (endsWithNewline ? "\n" : "");
}

function append(target: string[], source: readonly string[], from = 0, to = source.length): void {
  // A loop, not push(...): a spread of a long file's lines would overflow the argument limit.
  for (let i = from; i < to; i += 1) target.push(source[i] as string);
}

const quote = (line: string) => JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);

/** The old and new sides of a hunk, and which of them ends without a newline ("\ No newline at end of file"). */
function sidesOf(hunk: Hunk) {
  const before: string[] = [];
  const after: string[] = [];
  let beforeEndsBare = false;
  let afterEndsBare = false;
  let previous = " ";
  for (const line of hunk.lines) {
    const marker = line[0];
    if (marker === "\\") {
      if (previous !== "+") beforeEndsBare = true;
      if (previous !== "-") afterEndsBare = true;
      continue;
    }
    if (marker !== "+") before.push(line.slice(1));
    if (marker !== "-") after.push(line.slice(1));
    previous = marker ?? " ";
  }
  return { before, after, beforeEndsBare, afterEndsBare };
}

/** Applies a file's hunks in order; on failure, why the first hunk that does not fit fails. */
function applyHunks(source: Lines, hunks: readonly Hunk[]): { ok: true; value: Lines } | { ok: false; hunk: number; why: string } {
  const out: string[] = [];
  let endsWithNewline = source.endsWithNewline;
  let next = 0;
  for (const [index, hunk] of hunks.entries()) {
    const fail = (why: string) => ({ ok: false as const, hunk: index, why });
    const { before, after, beforeEndsBare, afterEndsBare } = sidesOf(hunk);
    // A hunk that only adds names the line it adds after; one that removes, its first line.
    const at = before.length === 0 ? hunk.oldStart : hunk.oldStart - 1;
    const end = at + before.length;
    if (at < next) return fail(`it starts at line ${hunk.oldStart}, before the end of the hunk ahead of it`);
    if (end > source.lines.length) return fail(`it reaches line ${end}; the base has ${source.lines.length} lines`);
    for (const [i, expected] of before.entries()) {
      const actual = source.lines[at + i] as string;
      if (actual !== expected) return fail(`line ${at + i + 1} of the base is ${quote(actual)}, the diff has ${quote(expected)}`);
    }
    const atEnd = end === source.lines.length;
    if (beforeEndsBare && !(atEnd && !source.endsWithNewline)) {
      return fail(`the diff says line ${end} is the last of the base with no newline after it; it is not`);
    }
    if (atEnd && source.lines.length > 0 && !source.endsWithNewline && !beforeEndsBare) {
      return fail("the base's last line has no newline after it, and the diff does not say so");
    }
    if (afterEndsBare && !atEnd) return fail("the diff leaves a line without a newline before the end of the file");
    append(out, source.lines, next, at);
    append(out, after);
    if (atEnd) endsWithNewline = after.length === 0 || !afterEndsBare;
    next = end;
  }
  append(out, source.lines, next);
  return { ok: true, value: { lines: out, endsWithNewline } };
}

/**
 * The submission's files: `diff` applied to `base` (path to content, of the base paths that
 * exist as regular files). A rename is the removal of its old path and its new path with the
 * old content, changed; a copy, its new path only. Mode changes are not kept: the overlay
 * holds contents only, so a mode-only section adds no file. Refuses at the first file or hunk
 * that does not apply, and a diff that changes no content at all: it would replace the saved
 * work with the base.
 */
export function applySubmissionDiff(diff: CheckedDiff, base: ReadonlyMap<string, Uint8Array>): Outcome<SubmittedFile[]> {
  const files: SubmittedFile[] = [];
  const notApplied = (msg: string) => invalid([{ loc: DIFF_LOC, msg: `git_diff does not apply to the task's base: ${msg}`, type: "diff_does_not_apply" }]);
  for (const { file, hunks, modeOnly } of diff.sections) {
    if (modeOnly) continue;
    const from = file.status === "added" ? null : (file.previousPath ?? file.path);
    if (file.status !== "modified" && file.status !== "removed" && base.has(file.path)) {
      return notApplied(`the diff creates ${file.path}, which already exists in the base`);
    }
    let bytes: Uint8Array = new Uint8Array(0);
    if (from !== null) {
      const found = base.get(from);
      if (!found) return notApplied(`${from} is not a file of the base`);
      bytes = found;
    }
    if (hunks.length > 0 || file.status === "removed") {
      let text: string;
      try {
        text = utf8.decode(bytes);
      } catch {
        return notApplied(`${from} is not UTF-8 text in the base, so a text diff cannot change it`);
      }
      const applied = applyHunks(toLines(text), hunks);
      if (!applied.ok) {
        const hunk = hunks[applied.hunk] as Hunk;
        return notApplied(`hunk ${applied.hunk + 1} of ${file.path} (${hunk.header}) does not fit: ${applied.why}`);
      }
      if (file.status === "removed" && applied.value.lines.length > 0) {
        return notApplied(`the diff removes ${file.path} without removing all of its lines`);
      }
      bytes = new TextEncoder().encode(fromLines(applied.value));
    }
    if (file.status === "removed") files.push({ path: file.path, op: "delete" });
    else files.push({ path: file.path, op: "upsert", content: bytes });
    if (file.status === "renamed" && from !== null) files.push({ path: from, op: "delete" });
  }
  if (files.length === 0) {
    return invalid([
      {
        loc: DIFF_LOC,
        msg: "git_diff changes no file's content (mode changes are not kept); send an empty git_diff to submit the saved changes",
        type: "empty_diff",
      },
    ]);
  }
  return { ok: true, value: files };
}
