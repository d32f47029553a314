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

/**
 * Set for every install step: packages whose install scripts download a browser or a binary
 * from a host prepare jobs cannot reach skip it, so the repository's own scripts (a monorepo's
 * postinstall) still run instead of the install falling back to no scripts at all.
 */
export const SKIP_DOWNLOADS: Readonly<Record<string, string>> = {
  PUPPETEER_SKIP_DOWNLOAD: "1",
  PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: "1",
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
  CYPRESS_INSTALL_BINARY: "0",
  ELECTRON_SKIP_BINARY_DOWNLOAD: "1",
  CHROMEDRIVER_SKIP_DOWNLOAD: "true",
  GECKODRIVER_SKIP_DOWNLOAD: "true",
  SENTRYCLI_SKIP_DOWNLOAD: "1",
  // husky's prepare script wants a git repository, which a snapshot is not.
  HUSKY: "0",
};

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
  /**
   * The versions the repository's engines.node / .nvmrc admit (all of them when it asks for
   * none), in the order the Worker tries them when the tests cannot start: the one the
   * repository alone would get first, then the others newest first. Empty when it admits none.
   */
  candidates: string[];
}

/**
 * The Node a job runs on: the stated version, else the one the repository's range admits,
 * the runner's default when it does (the Node most projects are tested on), else the highest;
 * the default when it states nothing, or asks for a version the runner does not have (the note
 * says so, and the install log carries it). `reason`: why the Worker stated the version (it
 * fell back from one that could not start the tests), for the note.
 */
export function chooseNode(range: string | null, available: string[], stated: string | null, reason: string | null = null): NodeChoice {
  const fallback = available[0] as string;
  const candidates = nodeCandidates(range, available);
  if (stated) {
    const match = pick(nodeRangeOf(stated), available);
    if (match) return { version: match, note: `Node ${match} (${reason ?? `the stated version: ${stated}`})`, candidates };
    return { version: fallback, note: `Node ${fallback}: the stated version ${JSON.stringify(stated)} is none of the runner's versions (${available.join(", ")}); using the default`, candidates };
  }
  if (!range) return { version: fallback, note: `Node ${fallback} (the runner's default; the repository names no version)`, candidates };
  const match = candidates[0];
  if (match) return { version: match, note: `Node ${match} (the repository's engines.node / .nvmrc: ${range})`, candidates };
  return {
    version: fallback,
    note: `Node ${fallback}: the repository's engines.node / .nvmrc asks for ${JSON.stringify(range)}, which none of the runner's versions (${available.join(", ")}) satisfies; using the default`,
    candidates,
  };
}

function nodeCandidates(range: string | null, available: string[]): string[] {
  const admitted = range === null ? "*" : nodeRangeOf(range);
  const first = pick(admitted, available);
  if (!first) return [];
  const others = available.filter((v) => v !== first && semver.satisfies(v, admitted as string)).sort(semver.rcompare);
  return [first, ...others];
}

/** The default when `range` admits it, else the highest version it admits. */
function pick(range: string | null, available: string[]): string | null {
  if (!range) return null;
  const fallback = available[0];
  if (fallback && semver.satisfies(fallback, range)) return fallback;
  return semver.maxSatisfying(available, range);
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
  // corepack writes the tarball's hash after the version ("pnpm@9.15.0+sha512.…"); npm wants the version alone.
  const pinned = (tool: string) => (facts.packageManager?.startsWith(`${tool}@`) ? facts.packageManager.replace(/\+.*$/, "") : null);
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
      const version = pinned("yarn")?.replace(/^yarn@/, "");
      const spec = version ? `@yarnpkg/cli-dist@${yarnBerryDist(version)}` : YARN_BERRY_DEFAULT;
      return [{ name: "yarn install --immutable", argv: exec(spec, "yarn", ["install", "--immutable"]) }];
    }
    default:
      return [step("npm install", ["npm", "install", ...NPM_FLAGS], ["--ignore-scripts"])];
  }
}

/**
 * The @yarnpkg/cli-dist version for a pinned yarn: the pin itself, except yarn 2 before 2.4.1,
 * which was never published there: yarn 2's last release instead.
 */
function yarnBerryDist(version: string): string {
  return semver.valid(version) && semver.satisfies(version, "2.0.0 - 2.4.0", { includePrerelease: true }) ? "2.4.2" : version;
}

/**
 * The package managers' settings in a prepare job: the runner's registries, reached through
 * the egress proxy at `proxy` when there is one, with one retry at most, so a host that
 * cannot be reached fails the step in seconds.
 */
export function installEnv(registries: { npm: string; pip: string }, proxy: string | null): Record<string, string> {
  const npm = new URL(registries.npm);
  const env: Record<string, string> = {
    npm_config_registry: registries.npm,
    npm_config_cache: "/tmp/.npm",
    npm_config_update_notifier: "false",
    npm_config_fetch_retries: "1",
    npm_config_fetch_retry_mintimeout: "2000",
    npm_config_fetch_retry_maxtimeout: "10000",
    // yarn Berry reads neither npm's settings nor HTTP(S)_PROXY, and its own settings from
    // the environment win over the project's .yarnrc.yml: without these it fetches from its
    // default host, directly, which the sandbox cannot reach, and retries each package.
    YARN_NPM_REGISTRY_SERVER: registries.npm.replace(/\/+$/, ""),
    YARN_HTTP_RETRY: "1",
    ...(npm.protocol === "http:" && { YARN_UNSAFE_HTTP_WHITELIST: npm.hostname }),
    YARN_ENABLE_TELEMETRY: "0",
    // The test runs and the runner's reporters load the framework from node_modules; Plug'n'Play
    // would need every process of theirs started with the project's .pnp.cjs.
    YARN_NODE_LINKER: "node-modules",
    YARN_ENABLE_GLOBAL_CACHE: "false",
    // yarn 1 refuses a project whose packageManager names another yarn, asking for corepack; its
    // lockfile is yarn 1's, and yarn 1 is what installs it.
    SKIP_YARN_COREPACK_CHECK: "1",
    PIP_INDEX_URL: registries.pip,
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
    PIP_NO_INPUT: "1",
    PIP_RETRIES: "1",
    PIP_TIMEOUT: "20",
  };
  if (proxy) {
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY"]) env[name] = proxy;
  }
  return env;
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

const PROXY_REFUSAL = /403 Forbidden|egress (?:proxy )?refused|not an allowed registry/i;

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
  [PROXY_REFUSAL, () => "an install step tried to reach a host other than the package registries, which prepare jobs cannot reach: state an install command that skips it"],
  [/ETARGET|notarget|No matching version found for ([^\s]+)/, (m) => `the registry has no version matching ${m[1] ?? "a dependency"}: check the lockfile`],
  [/E404|404 Not Found/, () => "a package was not found on the registry (a private package?): state an install command, or make the package public"],
  [/ENOSPC|no space left/i, () => "the workspace ran out of space: raise the job's workspace limit"],
];

/** Lines that end a failed tool's output without saying why it failed. */
const LOG_NOISE = /complete log of this run can be found|^npm (error|ERR!)\s*$|^npm (error|ERR!) (errno|code) |--- pip install /i;

/**
 * Why a step failed, from the end of its log: the first known cause, or the log's last line.
 * `refused` are the egress proxy's reasons for what the step tried to reach: they name the
 * host where the tool's own message may not (a refused CONNECT is a bare 403 to the tool).
 */
export function explainInstallFailure(step: string, exitCode: number | null, log: string, refused: readonly string[] = []): string {
  for (const [pattern, explain] of HINTS) {
    const match = log.match(pattern);
    if (match) return `${step} failed: ${pattern === PROXY_REFUSAL && refused.length > 0 ? refusedHint(refused) : explain(match)}`;
  }
  if (refused.length > 0) return `${step} failed: ${refusedHint(refused)}`;
  const last = log.split("\n").map((l) => l.trim()).filter((l) => l && !LOG_NOISE.test(l)).slice(-1)[0] ?? "";
  const exit = exitCode === null ? "it was killed" : `exit code ${exitCode}`;
  return `${step} failed (${exit})${last ? `: ${last.slice(0, 300)}` : ""}`;
}

function refusedHint(refused: readonly string[]): string {
  const reasons = [...new Set(refused)];
  const listed = `${reasons.slice(0, 3).join("; ")}${reasons.length > 3 ? `; and ${reasons.length - 3} more` : ""}`;
  return `the egress proxy refused what it tried to reach (${listed}): prepare jobs reach only the runner's package registries, at public addresses; state an install command that skips the rest`;
}
