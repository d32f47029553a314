import type { Framework } from "../../../protocol/jobs";
import type { CanaryStyle } from "./canary-style";
import type { Repo } from "./repo";

export type { Repo };

/** Where the test process writes its reports and finds the runner's tools, inside the sandbox. */
export interface RunPaths {
  /** The runner's node binary: never one the workspace could place on PATH. */
  node: string;
  /** The runner's tools directory (src/tools). */
  tools: string;
  junit: string;
  lcov: string;
  coverageConfig: string;
}

export interface RunOptions {
  repo: Repo;
  coverage: boolean;
  /** pytest-cov source directories that must be measured even when nothing imports them. */
  coverageDirs: string[];
  /** For frameworks run one file per process: the workspace-relative test files. */
  files: string[];
  /** Whether the repository has TypeScript test files (asked for node:test only). */
  typescript: boolean;
  /** Whether Python packages live under `src/` (made importable). */
  srcLayout: boolean;
  /**
   * The scoring hidden-test run (`job.test.canaries`): the report must be made in a process
   * where no candidate code runs, so options that would run test files in the reporter's
   * process are replaced (docs/runner-protocol.md, "Frameworks").
   */
  hidden: boolean;
}

export interface Invocation {
  argv: string[];
  /** Set for the test process beside the runner's own sandbox environment. */
  env: Record<string, string>;
}

/**
 * How the runner reads a framework's results (reports.ts, `parseTestReport`):
 * - `junit`: JUnit XML whose test cases carry `file`;
 * - `per-file`: the JSON of tools/run-tests.mjs, one TAP stream or uvu record list per file.
 */
export type ReportFormat = "junit" | "per-file";

/** One test framework: the four questions of docs/runner-protocol.md, "Frameworks". */
export interface FrameworkModule {
  name: Framework;
  /** Executable names (basename of argv[0]) that run this framework. */
  executables: string[];
  /** Declared by the repository beside its test script: config files, package.json keys, dependencies. */
  declared(repo: Repo): Promise<boolean>;
  /** The command when neither the job nor the test script states one. */
  defaultCommand: string[];
  /** Options that take the next argument as their value: it is theirs, not a test file. */
  valuedOptions: string[];
  /** How many leading arguments are the command itself (`vitest run`, `python -m pytest`). */
  prefixLength(command: string[]): number;
  /** How the command names exactly these test files, when plain file arguments would be taken for patterns. */
  fileArguments?(files: string[]): string[];
  /** Test files when the command names none: globs relative to the workspace. */
  defaultPatterns: string[];
  /** Whether the framework runs each test file in a process of its own (through tools/run-tests.mjs). */
  perFile: boolean;
  report: ReportFormat;
  /**
   * Files (globs, workspace-relative) that decide how this framework finds, loads, transforms,
   * sets up or reports tests: a hidden-test run keeps the task's version of each (harness-files.ts).
   */
  harness: readonly string[];
  /**
   * What code under test names only to reach into this framework's result machinery
   * (framework-reach.ts): its internal modules, its report objects. Unless the task's own code
   * names it too (the project is a testing tool), a changed line naming it voids a hidden-test run.
   */
  internals: readonly string[];
  /** How canaries are written among this framework's tests (canaries.ts). */
  canaries: CanaryStyle;
  /** The command with reporters (and coverage) added, as it is run. */
  instrument(command: string[], paths: RunPaths, options: RunOptions): Promise<Invocation>;
}
