/** One file changed between two commits, from `git diff --raw --numstat -z`. */
export interface ChangedFile {
  /** git's status letter: A, D, M, R, T (rename detection is on, copies are not looked for). */
  status: string;
  path: string;
  previousPath: string | null;
  oldBlob: string;
  newBlob: string;
  /** null for binary files, which git does not count in lines. */
  additions: number | null;
  deletions: number | null;
}

const RAW_ENTRY = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])(\d*)$/;

/**
 * Parses `git diff -z --raw --numstat`: first one raw record per file
 * (":modes blobs status\0path\0" plus a second path for renames), then one numstat record
 * per file in the same order ("added\tdeleted\tpath\0", or "added\tdeleted\t\0old\0new\0").
 */
export function parseRawNumstat(output: string): ChangedFile[] {
  const tokens = output.split("\0");
  const files: ChangedFile[] = [];
  let i = 0;
  for (; i < tokens.length && tokens[i]?.startsWith(":"); ) {
    const match = RAW_ENTRY.exec(tokens[i] ?? "");
    if (!match) throw new Error(`unexpected raw diff record: ${tokens[i]}`);
    const status = match[5] ?? "";
    const twoPaths = status === "R" || status === "C";
    const first = tokens[i + 1] ?? "";
    files.push({
      status,
      path: twoPaths ? (tokens[i + 2] ?? "") : first,
      previousPath: twoPaths ? first : null,
      oldBlob: match[3] ?? "",
      newBlob: match[4] ?? "",
      additions: null,
      deletions: null,
    });
    i += twoPaths ? 3 : 2;
  }
  for (const file of files) {
    const [added, deleted, pathField] = (tokens[i] ?? "").split("\t");
    if (added === undefined || deleted === undefined || pathField === undefined) {
      throw new Error(`unexpected numstat record: ${tokens[i]}`);
    }
    i += pathField === "" ? 3 : 1;
    file.additions = added === "-" ? null : Number(added);
    file.deletions = deleted === "-" ? null : Number(deleted);
  }
  return files;
}

/** A unified diff cut into one section per file, in the order git printed them. */
export function splitDiffByFile(diff: string): string[] {
  if (diff === "") return [];
  const starts: number[] = [];
  const header = /^diff --git /gm;
  for (let match = header.exec(diff); match; match = header.exec(diff)) starts.push(match.index);
  return starts.map((start, index) => diff.slice(start, starts[index + 1] ?? diff.length));
}

/** The hunks of one file's section, as GitHub's `patch` field holds them; null when there are none (binary, pure rename). */
export function hunksOf(section: string): string | null {
  const first = /^@@ /m.exec(section);
  return first ? section.slice(first.index).replace(/\n$/, "") : null;
}

/** Lines in a diff, counted as GitHub does for its diff size limit. */
export function countLines(diff: string): number {
  let lines = 0;
  for (let i = diff.indexOf("\n"); i !== -1; i = diff.indexOf("\n", i + 1)) lines += 1;
  return lines;
}
