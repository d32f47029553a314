import { readdir } from "node:fs/promises";
import { join, matchesGlob, posix } from "node:path";
import { patchPaths } from "./patches";
import { readRegularFile } from "./workspace-fs";

/**
 * The test harness of a hidden-test run (docs/scoring.md, "What is measured"): every file that
 * decides how tests are found, loaded, transformed, set up or reported stays at the task's
 * version, so that nothing of the candidate's runs but the code under test. Each framework
 * module lists its own (`FrameworkModule.harness`); this module adds what the task's own
 * configuration names (setup files, plugins, reporters, a test script's `--import`) and tells,
 * for the candidate's overlay, which paths are harness.
 */

/** Files every JavaScript run reads before any test: the package, its TypeScript and Babel settings, environment files. */
export const JS_HARNESS = [
  "**/package.json", "**/package-lock.json", "**/npm-shrinkwrap.json", "**/yarn.lock", "**/pnpm-lock.yaml", "**/pnpm-workspace.yaml", "**/.npmrc", "**/.yarnrc", "**/.yarnrc.yml", "**/.pnpmfile.cjs",
  "**/tsconfig*.json", "**/jsconfig*.json", "**/.babelrc", "**/.babelrc.*", "**/babel.config.*", "**/.swcrc", "**/.env", "**/.env.*", "**/node.config.json",
  "**/node_modules/**", "**/.yarn/**", "**/.pnp.*",
  // Bundlers' configuration, code a test script's build runs before the tests (frameworks/build.ts).
  "**/rollup.config.*", "**/webpack.config.*", "**/esbuild.config.*", "**/tsup.config.*", "**/build.config.*", "**/vite.config.*",
  // vite loads PostCSS's configuration (and the plugins it names, Tailwind's reading its own) as it
  // starts, whether or not any CSS is imported: in vitest that is the main process, where the report is made.
  "**/postcss.config.*", "**/.postcssrc", "**/.postcssrc.*", "**/tailwind.config.*",
  // The Node a run gets when the task states none (install.ts, readRepoFacts), read after the overlay is written.
  "**/.nvmrc", "**/.node-version",
];

/** Python's start-up hooks and the modules a test run imports before any test. */
export const PYTHON_HARNESS = [
  // pytest 9 reads pytest.toml and .pytest.toml before the others.
  "**/conftest.py", "**/pytest.ini", "**/.pytest.ini", "**/pytest.toml", "**/.pytest.toml", "**/tox.ini", "**/setup.cfg", "**/pyproject.toml", "**/.coveragerc",
  "**/sitecustomize.py", "**/usercustomize.py", "**/*.pth",
  "**/{pytest,py,_pytest,pluggy,iniconfig,unittest,coverage,pytest_cov,assay_pytest}.py", "**/{pytest,py,_pytest,pluggy,iniconfig,unittest,coverage,pytest_cov,assay_pytest}/**",
  "**/.venv/**", "**/venv/**",
  // Installed-package metadata on sys.path: its entry points load pytest plugins by themselves.
  "**/*.dist-info/**", "**/*.egg-info/**", "**/*.egg-link", "**/entry_points.txt",
  // Compiled code Python runs in place of the .py beside it (extension modules first; an unchecked
  // hash-based pyc is never compared with its source): a plain .py could hide code no check or reviewer reads.
  "**/__pycache__/**", "**/*.pyc", "**/*.so", "**/*.pyd",
];

const CONFIG_MAX_BYTES = 1024 * 1024;
const SCRIPT_EXTENSIONS = ["", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", "/index.js", "/index.ts", "/index.mjs", "/index.cjs"];

const matchesAny = (path: string, globs: readonly string[]) => globs.some((glob) => matchesGlob(path, glob));

/**
 * Sets the task's harness up in the workspace, before the overlay is written, and answers which
 * overlay paths are harness (to be left out). The harness is the version validation ran the
 * solution with: each file section of the solution patch that changes only harness files (a
 * framework's list, then what the configuration so changed names, say a new setup file) is
 * applied by `apply`, which says whether it did (a section that does not apply is left out, as
 * the run can still go on). An overlay path is harness when a framework's list or the task's
 * configuration names it, or a section changed it.
 */
export async function taskHarness(
  workspace: string, overlay: string[], globs: readonly string[], solutionPatch: string | null, apply: (section: string, index: number) => Promise<boolean>,
): Promise<Set<string>> {
  const sections = solutionPatch ? fileSections(solutionPatch) : [];
  const changed = new Set<string>();
  const done = new Set<number>();
  let named = await namedByConfiguration(workspace, globs);
  // Twice at most: a configuration the first pass changed may name files of the patch as harness.
  for (let pass = 0; pass < 2; pass++) {
    let applied = false;
    for (const [i, section] of sections.entries()) {
      if (done.has(i) || section.paths.length === 0 || !section.paths.every((p) => matchesAny(p, globs) || named.has(p))) continue;
      done.add(i);
      if (!(await apply(section.text, i))) continue;
      for (const path of section.paths) changed.add(path);
      applied = true;
    }
    if (!applied) break;
    named = await namedByConfiguration(workspace, globs);
  }
  return new Set(overlay.filter((path) => changed.has(path) || named.has(path) || matchesAny(path, globs)));
}

/** A git diff's per-file sections (`diff --git` headers), each with the paths it names. */
function fileSections(diff: string): Array<{ text: string; paths: string[] }> {
  const starts = [...diff.matchAll(/^diff --git /gm)].map((m) => m.index ?? 0);
  return starts.map((start, i) => {
    const text = diff.slice(start, starts[i + 1] ?? diff.length);
    let paths: string[];
    try {
      paths = patchPaths(text);
    } catch {
      paths = [];
    }
    return { text, paths };
  });
}

/**
 * Files the task's configuration names as setup files, plugins, reporters or loaders: every
 * string in its harness files that resolves to a workspace path, and the modules pytest's
 * `-p` and `pytest_plugins` name. A string that is an import of the configuration is code the
 * configuration uses (a vite plugin may be the code under test) and is not taken.
 */
async function namedByConfiguration(workspace: string, globs: readonly string[]): Promise<Set<string>> {
  const named = new Set<string>();
  for (const file of await configFiles(workspace, globs)) {
    const text = (await readRegularFile(join(workspace, file), CONFIG_MAX_BYTES))?.toString("utf8");
    if (!text) continue;
    const dir = posix.dirname(file);
    for (const ref of pathLikeStrings(text)) {
      for (const base of [dir, "."]) {
        const resolved = posix.normalize(posix.join(base, ref.replace(/^<rootDir>\//, "")));
        if (resolved.startsWith("..") || posix.isAbsolute(resolved)) continue;
        for (const ext of SCRIPT_EXTENSIONS) named.add(`${resolved}${ext}`.replace(/^\.\//, ""));
      }
    }
    for (const module of pytestPlugins(text)) {
      const path = module.replaceAll(".", "/");
      for (const candidate of [`${path}.py`, `${path}/__init__.py`, `src/${path}.py`, `src/${path}/__init__.py`]) named.add(candidate);
    }
  }
  return named;
}

/** Lock files, installed trees and compiled code name no setup file; they are not read for references. */
const NOT_READ = /(^|\/)(node_modules|\.venv|venv|\.yarn|__pycache__)\/|(-lock\.json|\.lock|-lock\.yaml|shrinkwrap\.json|\.pyc|\.so|\.pyd)$/;

/** The harness files that exist at the task's version: at the top level and two levels down (packages of a workspace). */
async function configFiles(workspace: string, globs: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number) => {
    const entries = await readdir(join(workspace, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory() && depth < 2 && !NOT_READ.test(`${rel}/`) && entry.name !== ".git") await walk(rel, depth + 1);
      else if (entry.isFile() && matchesAny(rel, globs) && !NOT_READ.test(rel)) found.push(rel);
    }
  };
  await walk("", 0);
  return found;
}

/**
 * Configuration keys whose values are files the runner loads before or around the tests
 * (jest, vitest, mocha, ava, ts-node): setup, environments, reporters, transforms, loaders.
 */
const SETUP_KEYS = [
  "setupFiles", "setupFilesAfterEnv", "globalSetup", "globalTeardown", "testEnvironment", "reporters", "reporter", "snapshotResolver", "testSequencer",
  "transform", "resolver", "runner", "testRunner", "watchPlugins", "require", "import", "loader", "node-option", "nodeArguments", "file", "environment",
  "setup", "dependencyExtractor", "prettierPath", "sequencer", "coverageProvider",
];
const SETUP_KEY = new RegExp(`(?:^|[\\s{,(["'])(?:${SETUP_KEYS.join("|")})["']?\\s*[:=]\\s*`, "g");
/** A test script's options that name a file the runner loads. */
const SCRIPT_OPTION = /(?:--import|--require|-r|--loader|--experimental-loader|--env-file|--file|--config|-c|--setup-files|--setupFiles|--globalSetup|--reporter|--testEnvironment)[=\s]+([^\s&|;'"]+)/g;

/** The strings of the values of setup keys, and a test script's loaded files. */
function pathLikeStrings(text: string): string[] {
  const strings: string[] = [];
  for (const key of text.matchAll(SETUP_KEY)) {
    const value = valueAfter(text, (key.index ?? 0) + key[0].length);
    for (const match of value.matchAll(/(["'`])((?:(?!\1)[^\\\n$])+)\1/g)) strings.push(match[2] as string);
    // INI and TOML values without quotes (`setup = tests/setup.py`).
    if (!/^[\s[{("'`]/.test(value)) strings.push(...value.split(/[\s,]+/));
  }
  for (const match of text.matchAll(SCRIPT_OPTION)) strings.push(match[1] as string);
  return strings.map((s) => s.trim()).filter((s) => /^(<rootDir>\/|\.{1,2}\/)[\w@./-]+$/.test(s) || /^[\w@][\w@.-]*(\/[\w@.-]+)*\.(c|m)?[jt]sx?$/.test(s) || /^[\w@][\w@.-]*(\/[\w@.-]+)+\.py$/.test(s));
}

/** The text of a value: up to the bracket that closes it, or the end of its line. */
function valueAfter(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length && i < start + 4000; i++) {
    const c = text[i];
    if (c === "[" || c === "{" || c === "(") depth++;
    else if (c === "]" || c === "}" || c === ")") {
      if (depth === 0) return text.slice(start, i);
      if (--depth === 0) return text.slice(start, i + 1);
    } else if ((c === "\n" || c === ",") && depth === 0) return text.slice(start, i);
  }
  return text.slice(start, start + 4000);
}

/** Modules pytest loads as plugins: `-p name` in options (`["-p", "name"]` in TOML's), `pytest_plugins = [...]` in a conftest. */
function pytestPlugins(text: string): string[] {
  const modules: string[] = [];
  for (const match of text.matchAll(/(?:^|\s|["'])-p(?:\s*|["']\s*,\s*["'])([A-Za-z_][\w.]*)/gm)) modules.push(match[1] as string);
  for (const match of text.matchAll(/pytest_plugins\s*=\s*([^\n]+(?:\n\s+[^\n]+)*)/g)) {
    for (const name of (match[1] as string).matchAll(/["']([A-Za-z_][\w.]*)["']/g)) modules.push(name[1] as string);
  }
  return modules.filter((m) => !m.startsWith("no:"));
}
