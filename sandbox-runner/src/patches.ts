import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkRelativePath, UnsafeInputError } from "./safe-path";
import { linkStaysInside } from "./workspace-fs";

const HEADER_PATTERNS: Array<[RegExp, number]> = [
  [/^--- (.+)$/, 1],
  [/^\+\+\+ (.+)$/, 1],
  [/^(?:rename|copy) (?:from|to) (.+)$/, 0],
];

/**
 * Every path a unified diff touches, from its ---/+++ lines (one `a/`/`b/` prefix
 * stripped, as `git apply -p1` does) and from git's rename/copy headers, each
 * checked to be relative, normalized and free of `..`.
 */
export function patchPaths(diff: string): string[] {
  const paths = new Set<string>();
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of diff.split("\n")) {
    if (oldLeft > 0 || newLeft > 0) {
      const c = line[0] ?? " ";
      if (c === "\\") continue;
      if (c === " " || c === "-" || c === "+") {
        if (c !== "+") oldLeft--;
        if (c !== "-") newLeft--;
        continue;
      }
      oldLeft = newLeft = 0;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = Number(hunk[1] ?? 1);
      newLeft = Number(hunk[2] ?? 1);
      continue;
    }
    const gitHeader = /^diff --git ("[^"]*"|a\/\S+) ("[^"]*"|b\/\S+)$/.exec(line);
    for (const side of gitHeader ? [gitHeader[1], gitHeader[2]] : []) {
      const verdict = checkRelativePath(unquote(side as string).replace(/^[^/]*\//, ""));
      if (!verdict.ok) throw new UnsafeInputError(`patch refused: ${verdict.reason}`);
      paths.add(verdict.path);
    }
    for (const [pattern, strip] of HEADER_PATTERNS) {
      const match = pattern.exec(line);
      if (!match?.[1]) continue;
      const raw = unquote(match[1].replace(/\t.*$/, ""));
      if (raw === "/dev/null") continue;
      const stripped = strip === 1 ? raw.replace(/^[^/]*\//, "") : raw;
      const verdict = checkRelativePath(stripped);
      if (!verdict.ok) throw new UnsafeInputError(`patch refused: ${verdict.reason}`);
      paths.add(verdict.path);
    }
  }
  return [...paths];
}

function unquote(path: string): string {
  if (!path.startsWith('"')) return path;
  if (!path.endsWith('"') || path.length < 2) throw new UnsafeInputError("patch refused: malformed quoted path");
  const inner = path.slice(1, -1);
  const bytes: number[] = [];
  const escapes: Record<string, number> = { n: 10, t: 9, '"': 34, "\\": 92, a: 7, b: 8, f: 12, r: 13, v: 11 };
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i] as string;
    if (ch !== "\\") {
      bytes.push(...Buffer.from(ch));
      continue;
    }
    const next = inner[i + 1] ?? "";
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(inner.slice(i + 1, i + 4), 8));
      i += 3;
    } else if (next in escapes) {
      bytes.push(escapes[next] as number);
      i += 1;
    } else {
      throw new UnsafeInputError("patch refused: malformed quoted path");
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/**
 * Applies the diff with `git apply` (atomic, refuses paths beyond symlinks and outside the
 * tree), after our own path checks; git is kept from finding any enclosing repository.
 * Links the patch created must still resolve inside the workspace.
 */
export async function applyPatch(workspace: string, diff: string, scratchDir: string, index: number): Promise<void> {
  const paths = patchPaths(diff);
  if (paths.length === 0) throw new UnsafeInputError(`patch ${index + 1} refused: no file headers found`);
  const file = join(scratchDir, `patch-${index}.diff`);
  await writeFile(file, diff.endsWith("\n") ? diff : `${diff}\n`);
  const result = await run("git", ["apply", "--whitespace=nowarn", "-p1", file], workspace, {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: scratchDir,
    GIT_CEILING_DIRECTORIES: dirname(workspace),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    LANG: "C",
  });
  if (result.code !== 0) throw new UnsafeInputError(`patch ${index + 1} does not apply: ${result.output.trim().slice(0, 2000)}`);
  for (const path of paths) {
    if (!(await linkStaysInside(workspace, path))) throw new UnsafeInputError(`patch ${index + 1} refused: symlink ${JSON.stringify(path)} points outside the workspace`);
  }
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
    let output = "";
    const collect = (c: Buffer) => {
      if (output.length < 64_000) output += c.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", (err) => resolve({ code: null, output: err.message }));
    child.on("close", (code) => resolve({ code, output }));
  });
}
