/**
 * Splits a pull request's diff into the solution patch (source files) and the test patch
 * (the hidden tests), as described in docs/tasks-from-prs.md.
 *
 * Input is the unified diff GitHub serves for `application/vnd.github.diff` (git diff -M):
 * one section per file, starting at "diff --git". Each section is copied byte for byte into
 * the patch of its file's kind, so both patches apply with `git apply` on their own and,
 * their paths being disjoint, in either order.
 */
import { classifyPath, type FileKind } from "./patch-rules";
import type { ParseResult } from "./pr-url";

export type { FileKind } from "./patch-rules";

export type FileStatus = "added" | "removed" | "modified" | "renamed" | "copied";

export interface PatchFile {
  /** Path at head; for a removed file, its path at base. */
  path: string;
  /** Path at base of a renamed or copied file. */
  previousPath?: string;
  status: FileStatus;
  kind: FileKind;
  /** Binary to git, or text that is not UTF-8 (handled as binary, see BinaryFile). */
  binary: boolean;
  additions: number;
  deletions: number;
}

/**
 * A file whose content the diff does not carry ("Binary files a/x and b/x differ"). It is in
 * neither patch; `completeBinaryPatches` (patch-binary.ts) adds it once the caller has read
 * the file at base (`previousPath ?? path`, unless added) and at head (`path`, unless removed).
 */
export interface BinaryFile extends PatchFile {
  /** The section's header lines without its "index" line, ending in "\n". */
  header: string;
}

export interface PatchStats {
  files: number;
  sourceFiles: number;
  testFiles: number;
  binaryFiles: number;
  additions: number;
  deletions: number;
  solutionPatchBytes: number;
  testPatchBytes: number;
}

export interface PatchSplit {
  solutionPatch: string;
  testPatch: string;
  files: PatchFile[];
  binaryFiles: BinaryFile[];
  stats: PatchStats;
}

/** Bounds on a pull request made into a task (docs/tasks-from-prs.md, "Size limits"). */
export const PR_LIMITS = {
  maxChangedFiles: 300,
  maxDiffBytes: 1024 * 1024,
  /** Content of binary files read from the repository, base and head together. */
  maxBinaryBytes: 5 * 1024 * 1024,
} as const;

const MIB = 1024 * 1024;

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

/** A reason when the pull request is larger than a task may be; `diffBytes` is unknown before the diff is read. */
export function checkPrSize(size: { changedFiles: number; diffBytes?: number }): { ok: true } | { ok: false; reason: string } {
  if (size.changedFiles > PR_LIMITS.maxChangedFiles) {
    return {
      ok: false,
      reason:
        `The pull request changes ${size.changedFiles} files; a task can be made from at most ` +
        `${PR_LIMITS.maxChangedFiles}. Choose a smaller pull request.`,
    };
  }
  if (size.diffBytes !== undefined && size.diffBytes > PR_LIMITS.maxDiffBytes) {
    return {
      ok: false,
      reason:
        `The pull request's diff is ${mib(size.diffBytes)}; a task can be made from at most ` +
        `${mib(PR_LIMITS.maxDiffBytes)} of diff. Choose a smaller pull request.`,
    };
  }
  return { ok: true };
}

/** A reason when the split leaves nothing to hide or nothing to solve. */
export function checkSplit(split: PatchSplit): { ok: true } | { ok: false; reason: string } {
  const tests = split.files.filter((f) => f.kind === "test").length;
  if (tests === 0) {
    return {
      ok: false,
      reason:
        "The pull request changes no test files, so there are no hidden tests to tell a right answer from a wrong one. " +
        "Choose a pull request that adds or changes tests (test file rules: docs/tasks-from-prs.md).",
    };
  }
  if (tests === split.files.length) {
    return { ok: false, reason: "The pull request changes only test files, so there is no solution for a candidate to write." };
  }
  return { ok: true };
}

interface Section {
  text: string;
  /** False when the section's bytes are not UTF-8: its content lines cannot be carried as text. */
  utf8: boolean;
}

const SECTION_START = "diff --git ";
const NEWLINE = 0x0a;

function startsSectionAt(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < SECTION_START.length; i += 1) if (bytes[at + i] !== SECTION_START.charCodeAt(i)) return false;
  return true;
}

/**
 * Cuts the diff into sections. Bytes are decoded per section, so that a text file in
 * another encoding (git diffs it as text) spoils only its own section.
 */
function sectionsOf(diff: string | Uint8Array): Section[] | string {
  if (typeof diff === "string") {
    if (diff !== "" && !diff.startsWith(SECTION_START)) return "it does not start with \"diff --git\"";
    return diff.split(/^(?=diff --git )/m).filter((s) => s !== "").map((text) => ({ text, utf8: true }));
  }
  if (diff.length > 0 && !startsSectionAt(diff, 0)) return "it does not start with \"diff --git\"";
  const starts: number[] = [];
  for (let at = 0; at < diff.length; at = diff.indexOf(NEWLINE, at) + 1 || diff.length) {
    if (startsSectionAt(diff, at)) starts.push(at);
  }
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const lenient = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  return starts.map((start, i) => {
    const bytes = diff.subarray(start, starts[i + 1] ?? diff.length);
    try {
      return { text: strict.decode(bytes), utf8: true };
    } catch {
      return { text: lenient.decode(bytes), utf8: false };
    }
  });
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, '"': 34 };

/** Reads a path git wrote in C-style quotes (names with special or non-ASCII characters); returns it and the rest. */
function unquote(text: string): { value: string; rest: string } | null {
  if (!text.startsWith('"')) return null;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 1; i < text.length; i += 1) {
    const ch = text[i] ?? "";
    if (ch === '"') {
      const value = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(new Uint8Array(bytes));
      return { value, rest: text.slice(i + 1) };
    }
    if (ch !== "\\") {
      bytes.push(...encoder.encode(ch));
      continue;
    }
    const next = text[i + 1] ?? "";
    const octal = /^[0-3][0-7]{2}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next] ?? 0);
      i += 1;
    } else {
      return null;
    }
  }
  return null;
}

/** A path after "rename from", "--- " and the like: quoted, or the rest of the line (git adds a tab after names with spaces). */
function readPath(text: string): string | null {
  if (text.startsWith('"')) {
    const quoted = unquote(text);
    return quoted && quoted.rest.replace(/\t$/, "") === "" ? quoted.value : null;
  }
  return text.replace(/\t$/, "");
}

function stripPrefix(path: string | null, prefix: "a/" | "b/"): string | null {
  if (path === null || path === "/dev/null") return path;
  return path.startsWith(prefix) ? path.slice(prefix.length) : null;
}

/** The two paths of a "diff --git" line, needed only when no other header names the file. */
function gitLinePaths(rest: string): { oldPath: string; newPath: string } | null {
  if (rest.startsWith('"')) {
    const first = unquote(rest);
    if (!first || !first.rest.startsWith(" ")) return null;
    const secondText = first.rest.slice(1);
    const second = secondText.startsWith('"') ? unquote(secondText) : { value: secondText, rest: "" };
    if (!second || second.rest !== "") return null;
    const oldPath = stripPrefix(first.value, "a/");
    const newPath = stripPrefix(second.value, "b/");
    return oldPath && newPath ? { oldPath, newPath } : null;
  }
  // Unquoted names may hold spaces; without a rename both names are the same, which fixes the split.
  const half = (rest.length - 1) / 2;
  const oldSide = rest.slice(0, half);
  const newSide = rest.slice(half + 1);
  if (!Number.isInteger(half) || rest[half] !== " ") return null;
  const oldPath = stripPrefix(oldSide, "a/");
  const newPath = stripPrefix(newSide, "b/");
  return oldPath !== null && oldPath === newPath ? { oldPath, newPath } : null;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** One hunk of a file's section: its header's numbers and its lines, each with its marker (" ", "-", "+" or "\\"). */
export interface Hunk {
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Reads a section's hunks, checking each has exactly the lines its header announces. */
function readHunks(lines: string[], from: number): Hunk[] | string {
  const hunks: Hunk[] = [];
  let i = from;
  while (i < lines.length) {
    const headerLine = lines[i] ?? "";
    const header = HUNK_HEADER.exec(headerLine);
    if (!header) return `unexpected line "${headerLine.slice(0, 60)}" where a hunk should start`;
    const hunk: Hunk = {
      header: header[0],
      oldStart: Number(header[1]),
      oldLines: header[2] === undefined ? 1 : Number(header[2]),
      newStart: Number(header[3]),
      newLines: header[4] === undefined ? 1 : Number(header[4]),
      lines: [],
    };
    let oldLeft = hunk.oldLines;
    let newLeft = hunk.newLines;
    i += 1;
    while (oldLeft > 0 || newLeft > 0 || lines[i]?.startsWith("\\")) {
      const line = lines[i];
      if (line === undefined) return "a hunk ends before the lines its header announces";
      const marker = line[0] ?? " ";
      if (marker === "+") {
        newLeft -= 1;
      } else if (marker === "-") {
        oldLeft -= 1;
      } else if (marker === " ") {
        oldLeft -= 1;
        newLeft -= 1;
      } else if (marker !== "\\") {
        return `unexpected line "${line.slice(0, 60)}" inside a hunk`;
      }
      if (oldLeft < 0 || newLeft < 0) return "a hunk has more lines than its header announces";
      // Some editors strip a context line's lone space; it is still a context line.
      hunk.lines.push(line === "" ? " " : line);
      i += 1;
    }
    hunks.push(hunk);
  }
  return hunks;
}

function countLines(hunks: Hunk[], marker: "+" | "-"): number {
  return hunks.reduce((n, h) => n + h.lines.filter((l) => l[0] === marker).length, 0);
}

/** One file's section of a git diff, read. */
export interface DiffSection {
  file: PatchFile;
  /** Set for "Binary files ... differ" and for text that is not UTF-8. */
  binaryHeader: string | null;
  /** The section as it goes into a patch; null when it goes in as a binary file. */
  text: string | null;
  /** Empty for a section without text changes (a rename or mode change alone, an empty file, a binary file). */
  hunks: Hunk[];
  /** A section that changes only the file's mode: its content stays as it is. */
  modeOnly: boolean;
}

const EXTENDED_HEADER =
  /^(?:old mode|new mode|deleted file mode|new file mode|similarity index|dissimilarity index|rename from|rename to|copy from|copy to|index) /;

function parseSection(section: Section): DiffSection | string {
  const text = section.text.endsWith("\n") ? section.text : `${section.text}\n`;
  const lines = text.slice(0, -1).split("\n");
  const gitLine = lines[0] ?? "";
  let status: FileStatus = "modified";
  let modeChange = false;
  let renameFrom: string | null = null;
  let renameTo: string | null = null;
  let i = 1;
  for (; i < lines.length && EXTENDED_HEADER.test(lines[i] ?? ""); i += 1) {
    const line = lines[i] ?? "";
    if (line.startsWith("old mode ") || line.startsWith("new mode ")) modeChange = true;
    else if (line.startsWith("new file mode ")) status = "added";
    else if (line.startsWith("deleted file mode ")) status = "removed";
    else if (line.startsWith("rename from ") || line.startsWith("copy from ")) {
      status = line.startsWith("rename") ? "renamed" : "copied";
      renameFrom = readPath(line.slice(line.indexOf(" from ") + 6));
    } else if (line.startsWith("rename to ") || line.startsWith("copy to ")) {
      renameTo = readPath(line.slice(line.indexOf(" to ") + 4));
    }
  }
  const headerEnd = i;
  const headerText = lines.slice(0, headerEnd).filter((line) => !line.startsWith("index ")).join("\n") + "\n";

  let oldPath: string | null = renameFrom;
  let newPath: string | null = renameTo;
  let binary = !section.utf8;
  let binaryContent = false;
  let hunks: Hunk[] = [];
  const next = lines[i] ?? "";
  if (i >= lines.length) {
    // A rename without changes, a mode change, or an empty file added or removed.
  } else if (/^Binary files .* differ$/.test(next) && i === lines.length - 1) {
    binary = true;
  } else if (next === "GIT binary patch") {
    binary = true;
    binaryContent = true;
  } else if (next.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
    const minus = stripPrefix(readPath(next.slice(4)), "a/");
    const plus = stripPrefix(readPath((lines[i + 1] ?? "").slice(4)), "b/");
    if (minus === null || plus === null) return `the file names in "${next}" are not of the a/ and b/ form`;
    oldPath ??= minus === "/dev/null" ? null : minus;
    newPath ??= plus === "/dev/null" ? null : plus;
    if (section.utf8) {
      const read = readHunks(lines, i + 2);
      if (typeof read === "string") return `in ${newPath ?? oldPath}: ${read}`;
      hunks = read;
    }
  } else {
    return `unexpected line "${next.slice(0, 60)}" after the header of "${gitLine.slice(0, 80)}"`;
  }

  if (oldPath === null && newPath === null) {
    const fromGitLine = gitLinePaths(gitLine.slice(SECTION_START.length));
    if (!fromGitLine) return `cannot read the file names in "${gitLine.slice(0, 80)}"`;
    ({ oldPath, newPath } = fromGitLine);
  }
  const path = status === "removed" ? oldPath : newPath;
  if (!path) return `cannot tell which file "${gitLine.slice(0, 80)}" changes`;

  // git writes a section only for a change; one with no hunks, no mode, rename or copy line and no
  // binary marker is a cut-off upload or a client's bug, and read as "unchanged" it would stand for the base.
  if (status === "modified" && !modeChange && !binary && hunks.length === 0) {
    return `the section of ${path} changes nothing (no hunk, no mode, rename or copy line): is the diff cut short?`;
  }

  const counts = { additions: countLines(hunks, "+"), deletions: countLines(hunks, "-") };
  const file: PatchFile = { path, status, kind: classifyPath(path), binary, ...counts };
  if ((status === "renamed" || status === "copied") && oldPath) file.previousPath = oldPath;
  const carriedAsBinaryFile = binary && !binaryContent;
  const modeOnly = status === "modified" && !binary && hunks.length === 0;
  return { file, binaryHeader: carriedAsBinaryFile ? headerText : null, text: carriedAsBinaryFile ? null : text, hunks, modeOnly };
}

/** Reads a git diff section by section; the reason says what could not be read. No path is changed twice. */
export function readDiff(diff: string | Uint8Array): ParseResult<DiffSection[]> {
  const sections = sectionsOf(diff);
  if (typeof sections === "string") return { ok: false, reason: sections };
  const read: DiffSection[] = [];
  const seen = new Set<string>();
  for (const section of sections) {
    const parsed = parseSection(section);
    if (typeof parsed === "string") return { ok: false, reason: parsed };
    for (const p of changedPaths(parsed.file)) {
      if (seen.has(p)) return { ok: false, reason: `it changes ${p} twice` };
      seen.add(p);
    }
    read.push(parsed);
  }
  return { ok: true, value: read };
}

/** The paths a file's section changes: a copy leaves its source in place, so only a rename's source counts. */
export function changedPaths(file: PatchFile): string[] {
  return file.status === "renamed" && file.previousPath !== undefined ? [file.path, file.previousPath] : [file.path];
}

/**
 * Parses a git diff and splits it by kind. A rename goes wholly into the patch of its new
 * path's kind: the diff of a rename holds only the changes, not the content, so it cannot be
 * cut into a removal in one patch and an addition in the other.
 */
export function splitPatch(diff: string | Uint8Array): ParseResult<PatchSplit> {
  const sections = readDiff(diff);
  if (!sections.ok) return { ok: false, reason: `The pull request's diff could not be read: ${sections.reason}.` };
  const solution: string[] = [];
  const tests: string[] = [];
  const files: PatchFile[] = [];
  const binaryFiles: BinaryFile[] = [];
  for (const parsed of sections.value) {
    const { file } = parsed;
    files.push(file);
    if (parsed.binaryHeader !== null) binaryFiles.push({ ...file, header: parsed.binaryHeader });
    if (parsed.text !== null) (file.kind === "test" ? tests : solution).push(parsed.text);
  }
  const solutionPatch = solution.join("");
  const testPatch = tests.join("");
  const encoder = new TextEncoder();
  const testFiles = files.filter((f) => f.kind === "test").length;
  return {
    ok: true,
    value: {
      solutionPatch,
      testPatch,
      files,
      binaryFiles,
      stats: {
        files: files.length,
        sourceFiles: files.length - testFiles,
        testFiles,
        binaryFiles: files.filter((f) => f.binary).length,
        additions: files.reduce((sum, f) => sum + f.additions, 0),
        deletions: files.reduce((sum, f) => sum + f.deletions, 0),
        solutionPatchBytes: encoder.encode(solutionPatch).length,
        testPatchBytes: encoder.encode(testPatch).length,
      },
    },
  };
}
