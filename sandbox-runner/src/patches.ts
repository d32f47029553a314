import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkRelativePath } from "../../protocol/paths";
import { UnsafeInputError } from "./safe-path";
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
 * Creates the empty bare repository that host-side `git apply` is pointed at. With GIT_DIR
 * set, git never looks for a repository in the workspace, whose files are the candidate's
 * and the imported repository's: a workspace laid out as a bare repository (HEAD, objects/,
 * refs/, config with a filter or fsmonitor command) would otherwise be read as one.
 */
export async function createEmptyGitDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const result = await run("git", ["init", "--quiet", "--bare", dir], dirname(dir), isolatedGitEnv(dir, dir));
  if (result.code !== 0) throw new Error(`git init failed: ${result.output.trim()}`);
}

/**
 * Nothing from the workspace or the host's configuration steers git: no system or global
 * config, no repository discovery, no attributes file, no hooks, no fsmonitor, no pager, no
 * replace refs, and bare repositories only when named explicitly.
 */
function isolatedGitEnv(gitDir: string, home: string): Record<string, string> {
  const config: Array<[string, string]> = [
    ["safe.bareRepository", "explicit"],
    ["core.hooksPath", "/dev/null"],
    ["core.fsmonitor", "false"],
    ["core.attributesFile", "/dev/null"],
    ["core.excludesFile", "/dev/null"],
    ["protocol.allow", "never"],
  ];
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_DIR: gitDir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    LANG: "C",
    GIT_CONFIG_COUNT: String(config.length),
  };
  for (const [i, [key, value]] of config.entries()) {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  }
  return env;
}

/**
 * Applies the diff with `git apply` (atomic, refuses paths beyond symlinks and outside the
 * tree), after our own path checks, in an isolated git environment (see isolatedGitEnv).
 * Links the patch created must still resolve inside the workspace.
 */
export async function applyPatch(workspace: string, diff: string, scratchDir: string, index: number, emptyGitDir: string): Promise<void> {
  const paths = patchPaths(diff);
  if (paths.length === 0) throw new UnsafeInputError(`patch ${index + 1} refused: no file headers found`);
  const file = join(scratchDir, `patch-${index}.diff`);
  await writeFile(file, diff.endsWith("\n") ? diff : `${diff}\n`);
  const env = { ...isolatedGitEnv(emptyGitDir, scratchDir), GIT_WORK_TREE: workspace };
  const result = await run("git", ["apply", "--whitespace=nowarn", "-p1", file], workspace, env);
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
