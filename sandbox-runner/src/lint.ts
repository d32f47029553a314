import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { LintFinding, LintReport } from "../../protocol/callback";
import type { Limits } from "../../protocol/jobs";
import { tail } from "./output-capture";
import type { SandboxPaths, SandboxResult } from "./sandbox";
import { lstatNoLinks, readRegularFile, writeWorkspaceFile } from "./workspace-fs";

/** Most findings one callback carries; the rest are counted out by `truncated`. */
export const MAX_LINT_FINDINGS = 500;
/** Larger files (generated or minified code) are not linted. */
const LINT_FILE_MAX_BYTES = 1024 * 1024;
const TEXT_MAX = 500;
const REPORT_MAX_BYTES = 8 * 1024 * 1024;
const ESLINT_FILE = /\.(js|mjs|cjs|jsx|ts|mts|cts|tsx)$/;
const PYFLAKES_FILE = /\.py$/;

/**
 * The linters are the runner's code, so they get fixed limits rather than the job's, which
 * are sized for the candidate's tests (and may already have been used up by them).
 */
export const LINT_LIMITS: Limits = { wall_ms: 60_000, cpu_ms: 60_000, memory_mb: 1024, processes: 256, output_bytes: 64 * 1024, workspace_mb: 512 };

export interface LintInput {
  /** Host directory holding the copies, laid out like the workspace. */
  dir: string;
  eslint: string[];
  pyflakes: string[];
}

const toolReportSchema = z.object({
  files_checked: z.number().int().min(0),
  findings: z.array(
    z.object({
      file: z.string(),
      line: z.number().int().min(0),
      column: z.number().int().min(0),
      rule: z.string(),
      message: z.string(),
      severity: z.enum(["error", "warning"]),
    }),
  ),
  truncated: z.boolean(),
  error: z.string().nullable(),
});

/**
 * Copies the files to lint out of the workspace before the tests run: test code could
 * otherwise rewrite them (or swap in symlinks) before the linter reads them. Files that are
 * missing, symlinks, over 1 MiB or of no linted language are left out.
 */
export async function stageLintFiles(workspace: string, files: string[], dir: string): Promise<LintInput> {
  const input: LintInput = { dir, eslint: [], pyflakes: [] };
  await mkdir(dir, { recursive: true, mode: 0o755 });
  for (const file of files) {
    const bucket = ESLINT_FILE.test(file) ? input.eslint : PYFLAKES_FILE.test(file) ? input.pyflakes : null;
    if (!bucket || !(await lstatNoLinks(workspace, file))?.isFile()) continue;
    const content = await readRegularFile(join(workspace, file), LINT_FILE_MAX_BYTES);
    if (!content) continue;
    await writeWorkspaceFile(dir, file, content);
    bucket.push(file);
  }
  return input;
}

export type LintSandboxRun = (command: string[], env: Record<string, string>) => Promise<SandboxResult>;

/**
 * Runs ESLint and pyflakes over the staged copies, one sandbox run each, and merges their
 * reports. A linter that cannot run leaves its reason in `error`; it never fails the job.
 */
export async function runLint(
  input: LintInput,
  order: string[],
  inside: Pick<SandboxPaths, "output" | "nodeBinDir" | "toolsDir">,
  hostOutput: string,
  eslintProblem: string | null,
  run: LintSandboxRun,
): Promise<LintReport> {
  const tools = [
    { name: "eslint", files: input.eslint, problem: eslintProblem, argv: [`${inside.nodeBinDir}/node`, `${inside.toolsDir}/eslint-report.mjs`] },
    { name: "pyflakes", files: input.pyflakes, problem: null, argv: ["/usr/bin/python3", "-I", `${inside.toolsDir}/pyflakes-report.py`] },
  ].filter((t) => t.files.length > 0);
  const env = { PATH: `${inside.nodeBinDir}:/usr/bin:/bin`, HOME: "/tmp", TMPDIR: "/tmp", LANG: "C.UTF-8", NO_COLOR: "1", PYTHONDONTWRITEBYTECODE: "1" };
  const report: LintReport = { tool: tools.map((t) => t.name).join("+") || "none", files_checked: 0, findings: [], truncated: false, error: null };
  const errors: string[] = [];
  for (const tool of tools) {
    if (tool.problem) {
      errors.push(`${tool.name}: ${tool.problem}`);
      continue;
    }
    const result = await run([...tool.argv, `${inside.output}/${tool.name}.json`, String(MAX_LINT_FINDINGS), ...tool.files], env);
    const outcome = result.spawnError ?? (result.killedFor ? `stopped at its ${result.killedFor === "wall" ? "wall-clock" : result.killedFor} limit` : null);
    if (outcome) {
      errors.push(`${tool.name}: ${outcome}`);
      continue;
    }
    const raw = await readRegularFile(join(hostOutput, `${tool.name}.json`), REPORT_MAX_BYTES);
    const parsed = raw ? toolReportSchema.safeParse(safeJson(raw.toString("utf8"))) : null;
    if (!parsed?.success) {
      const said = tail(result.log, TEXT_MAX).trim();
      errors.push(`${tool.name}: produced no report (exit code ${result.exitCode ?? "none"})${said ? `: ${said}` : ""}`);
      continue;
    }
    const mine = new Set(tool.files);
    report.files_checked += parsed.data.files_checked;
    report.truncated ||= parsed.data.truncated;
    for (const f of parsed.data.findings) if (mine.has(f.file)) report.findings.push(bounded(f));
    if (parsed.data.error) errors.push(`${tool.name}: ${parsed.data.error.slice(0, TEXT_MAX)}`);
  }
  const rank = new Map(order.map((file, i) => [file, i]));
  report.findings.sort((a, b) => (rank.get(a.file) ?? 0) - (rank.get(b.file) ?? 0) || a.line - b.line || a.column - b.column);
  if (report.findings.length > MAX_LINT_FINDINGS) {
    report.findings.length = MAX_LINT_FINDINGS;
    report.truncated = true;
  }
  report.error = errors.length > 0 ? errors.join("; ") : null;
  return report;
}

function bounded(f: LintFinding): LintFinding {
  return { ...f, rule: f.rule.slice(0, 100), message: f.message.slice(0, TEXT_MAX) };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
