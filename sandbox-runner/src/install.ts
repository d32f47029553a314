import semver from "semver";
import { readManifest, readPackageJson, type PackageJson } from "./frameworks";
import { lstatNoLinks } from "./workspace-fs";

/**
 * How a prepare job installs a repository (docs/runner-protocol.md, "Installs"): the lockfile
 * it has decides the tool, Python gets a virtual environment with its requirements and the
 * project itself, and the Node version follows what the repository asks for among those the
 * runner has. Every step is fixed text chosen here, except a stated install command, which
 * runs as the argv it was given; all of it runs only in the prepare sandbox.
 */

/** One command of an install, run in the prepare sandbox on its own. */
export interface InstallStep {
  /** What the step is, for logs and reasons: "npm ci", "pip install -r requirements.txt". */
  name: string;
  argv: string[];
  /** Run when the step fails: the same install without what most often breaks it offline. */
  fallback?: { name: string; argv: string[]; note: string };
}

/** The outcome of a step as the callback reports it. */
export interface InstallStepResult {
  name: string;
  exit_code: number | null;
  ok: boolean;
  duration_ms: number;
  /** For a failed step: what its log says went wrong and what to do, in words a user can act on. */
  hint: string | null;
}

export interface RepoFacts {
  pkg: PackageJson | null;
  hasDependencies: boolean;
  lockfile: "npm" | "pnpm" | "yarn" | "yarn-berry" | null;
  /** `packageManager` of package.json (corepack's field), e.g. "pnpm@9.15.0". */
  packageManager: string | null;
  /** What the repository asks of Node: engines.node, else .nvmrc or .node-version. */
  nodeRange: string | null;
  requirementFiles: string[];
  /** pyproject.toml with a [project] or [build-system] table, setup.py or setup.cfg. */
  pythonProject: boolean;
  /** Extras of the project named for tests ([project.optional-dependencies]). */
  testExtras: string[];
}

const REQUIREMENT_FILES = [
  "requirements.txt", "requirements-dev.txt", "requirements-test.txt", "requirements_test.txt", "requirements_dev.txt",
  "test-requirements.txt", "test_requirements.txt", "dev-requirements.txt",
  "requirements/test.txt", "requirements/tests.txt", "requirements/dev.txt", "requirements/testing.txt",
];
const TEST_EXTRAS = ["test", "tests", "testing"];

/** pnpm and yarn as fetched from the registry when the repository does not pin one. */
export const PNPM_DEFAULT = "pnpm@9.15.9";
export const YARN_CLASSIC = "yarn@1.22.22";
export const YARN_BERRY_DEFAULT = "@yarnpkg/cli-dist@4.9.2";

const LTS_CODENAMES: Record<string, number> = {
  argon: 4, boron: 6, carbon: 8, dubnium: 10, erbium: 12, fermium: 14, gallium: 16, hydrogen: 18, iron: 20, jod: 22, krypton: 24,
};

async function isFile(workspace: string, path: string): Promise<boolean> {
  return (await lstatNoLinks(workspace, path))?.isFile() ?? false;
}

export async function readRepoFacts(workspace: string): Promise<RepoFacts> {
  const pkg = await readPackageJson(workspace);
  const deps = { ...pkg?.dependencies, ...pkg?.devDependencies, ...pkg?.optionalDependencies };
  let lockfile: RepoFacts["lockfile"] = null;
  if ((await isFile(workspace, "package-lock.json")) || (await isFile(workspace, "npm-shrinkwrap.json"))) lockfile = "npm";
  else if (await isFile(workspace, "pnpm-lock.yaml")) lockfile = "pnpm";
  else if (await isFile(workspace, "yarn.lock")) {
    lockfile = /^__metadata:/m.test((await readManifest(workspace, "yarn.lock")) ?? "") ? "yarn-berry" : "yarn";
  }
  const packageManager = typeof pkg?.packageManager === "string" && /^(npm|pnpm|yarn)@\d[\w.+-]*$/.test(pkg.packageManager) ? pkg.packageManager : null;
  const engines = pkg?.engines as Record<string, unknown> | undefined;
  const enginesNode = typeof engines?.node === "string" ? engines.node : null;
  const nvmrc = ((await readManifest(workspace, ".nvmrc")) ?? (await readManifest(workspace, ".node-version")))?.split("\n")[0]?.trim() || null;

  const requirementFiles: string[] = [];
  for (const name of REQUIREMENT_FILES) if (await isFile(workspace, name)) requirementFiles.push(name);
  const pyproject = await readManifest(workspace, "pyproject.toml");
  const pythonProject =
    (pyproject !== null && /^\[(project|build-system)\]/m.test(pyproject)) || (await isFile(workspace, "setup.py")) || (await isFile(workspace, "setup.cfg"));
  return {
    pkg,
    hasDependencies: Object.keys(deps).length > 0,
    lockfile,
    packageManager,
    nodeRange: enginesNode ?? nvmrc,
    requirementFiles,
    pythonProject,
    testExtras: pyproject ? extrasOf(pyproject).filter((e) => TEST_EXTRAS.includes(e)) : [],
  };
}

/** The keys of pyproject's [project.optional-dependencies] table (no TOML parser needed for keys). */
function extrasOf(pyproject: string): string[] {
  const table = /^\[project\.optional-dependencies\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(pyproject)?.[1] ?? "";
  return [...table.matchAll(/^([A-Za-z0-9_.-]+)\s*=/gm)].map((m) => (m[1] as string).toLowerCase());
}

/** A Node version among `available` (full versions, the default first) and why it was chosen. */
export interface NodeChoice {
  version: string;
  note: string;
}

/**
 * The Node a job runs on: the stated version, else the highest one the repository's range
 * admits; the runner's default when it states nothing, or asks for a version the runner does
 * not have (the note says so, and the install log carries it).
 */
export function chooseNode(range: string | null, available: string[], stated: string | null): NodeChoice {
  const fallback = available[0] as string;
  const wanted = stated ?? range;
  if (!wanted) return { version: fallback, note: `Node ${fallback} (the runner's default; the repository names no version)` };
  const asRange = nodeRangeOf(wanted);
  const match = asRange ? semver.maxSatisfying(available, asRange) : null;
  const source = stated ? "the stated version" : "the repository's engines.node / .nvmrc";
  if (match) return { version: match, note: `Node ${match} (${source}: ${wanted})` };
  return {
    version: fallback,
    note: `Node ${fallback}: ${source} asks for ${JSON.stringify(wanted)}, which none of the runner's versions (${available.join(", ")}) satisfies; using the default`,
  };
}

/** `.nvmrc` forms (v20.11.0, 20, lts/iron, node) and engines ranges as a semver range, or null. */
function nodeRangeOf(text: string): string | null {
  const t = text.trim().replace(/^v(?=\d)/, "");
  const lts = /^lts\/(\w+)$/i.exec(t)?.[1]?.toLowerCase();
  if (lts) return lts === "*" ? "*" : LTS_CODENAMES[lts] !== undefined ? `${LTS_CODENAMES[lts]}.x` : null;
  if (/^(node|stable|latest|current|lts\/\*)$/i.test(t)) return "*";
  return semver.validRange(t, { loose: true });
}

/** Install steps for a repository, or the stated command alone. */
export function planInstall(facts: RepoFacts, stated: string[] | null): InstallStep[] {
  if (stated) return [{ name: stated.join(" "), argv: stated }];
  return [...nodeSteps(facts), ...pythonSteps(facts)];
}

const NPM_FLAGS = ["--no-audit", "--no-fund"];
const IGNORE_SCRIPTS_NOTE = "installed again without install scripts: the dependencies' postinstall steps did not run";

function nodeSteps(facts: RepoFacts): InstallStep[] {
  if (!facts.pkg || (!facts.hasDependencies && !facts.lockfile)) return [];
  const pinned = (tool: string) => (facts.packageManager?.startsWith(`${tool}@`) ? facts.packageManager : null);
  const exec = (spec: string, bin: string, args: string[]) => ["npm", "exec", "--yes", `--package=${spec}`, "--", bin, ...args];
  const step = (name: string, argv: string[], again: string[]): InstallStep => ({
    name,
    argv,
    fallback: { name: `${name} --ignore-scripts`, argv: [...argv, ...again], note: IGNORE_SCRIPTS_NOTE },
  });
  switch (facts.lockfile) {
    case "npm":
      return [step("npm ci", ["npm", "ci", ...NPM_FLAGS], ["--ignore-scripts"])];
    case "pnpm": {
      const spec = pinned("pnpm") ?? PNPM_DEFAULT;
      return [step(`${spec} install --frozen-lockfile`, exec(spec, "pnpm", ["install", "--frozen-lockfile"]), ["--ignore-scripts"])];
    }
    case "yarn":
      return [step("yarn install --frozen-lockfile", exec(YARN_CLASSIC, "yarn", ["install", "--frozen-lockfile", "--non-interactive"]), ["--ignore-scripts"])];
    case "yarn-berry": {
      const spec = pinned("yarn")?.replace(/^yarn@/, "@yarnpkg/cli-dist@") ?? YARN_BERRY_DEFAULT;
      return [{ name: "yarn install --immutable", argv: exec(spec, "yarn", ["install", "--immutable"]) }];
    }
    default:
      return [step("npm install", ["npm", "install", ...NPM_FLAGS], ["--ignore-scripts"])];
  }
}

const VENV_PIP = [".venv/bin/python", "-m", "pip", "install"];

function pythonSteps(facts: RepoFacts): InstallStep[] {
  if (facts.requirementFiles.length === 0 && !facts.pythonProject) return [];
  // The system's pip (Debian's python3-pip, through the system site packages) installs into the
  // environment it runs in: seeding a pip of its own into every venv costs seconds.
  const steps: InstallStep[] = [
    { name: "python3 -m venv --system-site-packages .venv", argv: ["/usr/bin/python3", "-m", "venv", "--system-site-packages", "--without-pip", ".venv"] },
  ];
  for (const file of facts.requirementFiles) {
    steps.push({
      name: `pip install -r ${file}`,
      argv: [...VENV_PIP, "-r", file],
      // One requirement the index lacks fails pip's whole resolution; the others still help the tests.
      fallback: {
        name: `pip install each requirement of ${file}`,
        argv: ["/bin/sh", "-c", EACH_REQUIREMENT, "sh", file],
        note: "installed one requirement at a time: the ones that failed are in the log",
      },
    });
  }
  if (facts.pythonProject) {
    const target = facts.testExtras.length > 0 ? `.[${facts.testExtras.join(",")}]` : ".";
    steps.push({
      // The system's build backend first: most projects build with setuptools, which needs no
      // download then; one whose backend the system lacks (hatchling, poetry) fails at once.
      name: `pip install --no-build-isolation -e ${target}`,
      argv: [...VENV_PIP, "--no-build-isolation", "-e", target],
      fallback: {
        name: `pip install -e ${target}`,
        argv: [...VENV_PIP, "-e", target],
        note: "built with the build backend the project declares, fetched from the index (build isolation)",
      },
    });
  }
  return steps;
}

/** Fixed text: each plain requirement line of "$1" on its own; exit status 1 when any failed. */
const EACH_REQUIREMENT = [
  'failed=0',
  'while IFS= read -r line || [ -n "$line" ]; do',
  '  req=${line%%#*}; req=$(printf %s "$req" | tr -d "\\r" | sed "s/^[[:space:]]*//;s/[[:space:]]*$//")',
  '  case "$req" in ""|-*) continue;; esac',
  '  echo "--- pip install $req"',
  '  .venv/bin/python -m pip install "$req" || failed=1',
  'done < "$1"',
  'exit $failed',
].join("\n");

const HINTS: Array<[RegExp, (m: RegExpMatchArray) => string]> = [
  [
    /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERTIFICATE_VERIFY_FAILED|self[- ]signed certificate in certificate chain/i,
    () => "the registry's TLS certificate is signed by a CA the sandbox does not trust (a TLS-inspecting proxy?): set RUNNER_EXTRA_CA_CERTS on the runner to that CA's PEM file (docs/runner-protocol.md, \"Extra CA certificates\")",
  ],
  [/ERESOLVE/, () => "npm could not resolve the dependency tree: fix the lockfile, or state an install command such as [\"npm\",\"ci\",\"--legacy-peer-deps\"]"],
  [/`npm ci` can only install packages when your package\.json and package-lock\.json|npm ci.*in sync|EUSAGE/i, () => "package.json and package-lock.json do not match: commit an updated lockfile, or state [\"npm\",\"install\"] as the install command"],
  [/ERR_PNPM_OUTDATED_LOCKFILE|frozen-lockfile.*(outdated|not up to date)|lockfile needs to be updated/i, () => "the lockfile does not match package.json: commit an updated lockfile, or state an install command without --frozen-lockfile"],
  [/No matching distribution found for ([^\s]+)/, (m) => `the package index has no ${m[1]}: remove it from the requirements, or state an install command`],
  [/(?:getaddrinfo )?(?:ENOTFOUND|EAI_AGAIN) ([\w.-]+)/, (m) => `an install step tried to reach ${m[1]}, which prepare jobs cannot reach (only the package registries): state an install command that skips it, e.g. with --ignore-scripts`],
  [/403 Forbidden|egress (?:proxy )?refused|not an allowed registry/i, () => "an install step tried to reach a host other than the package registries, which prepare jobs cannot reach: state an install command that skips it"],
  [/ETARGET|notarget|No matching version found for ([^\s]+)/, (m) => `the registry has no version matching ${m[1] ?? "a dependency"}: check the lockfile`],
  [/E404|404 Not Found/, () => "a package was not found on the registry (a private package?): state an install command, or make the package public"],
  [/ENOSPC|no space left/i, () => "the workspace ran out of space: raise the job's workspace limit"],
];

/** Lines that end a failed tool's output without saying why it failed. */
const LOG_NOISE = /complete log of this run can be found|^npm (error|ERR!)\s*$|^npm (error|ERR!) (errno|code) |--- pip install /i;

/** Why a step failed, from the end of its log: the first known cause, or the log's last line. */
export function explainInstallFailure(step: string, exitCode: number | null, log: string): string {
  for (const [pattern, explain] of HINTS) {
    const match = log.match(pattern);
    if (match) return `${step} failed: ${explain(match)}`;
  }
  const last = log.split("\n").map((l) => l.trim()).filter((l) => l && !LOG_NOISE.test(l)).slice(-1)[0] ?? "";
  const exit = exitCode === null ? "it was killed" : `exit code ${exitCode}`;
  return `${step} failed (${exit})${last ? `: ${last.slice(0, 300)}` : ""}`;
}
