import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defaultLintModules } from "./tools";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/**
 * Outside the checkout, which may sit where the sandbox users cannot enter (under /root, or
 * in a 0700 temp dir); one per checkout so two clones never share job state.
 */
export const defaultWorkDir = join("/var/tmp/assay-runner", createHash("sha256").update(repoRoot).digest("hex").slice(0, 12));

const flag = z
  .enum(["0", "1", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

const envSchema = z.object({
  RUNNER_HOST: z.string().min(1).default("127.0.0.1"),
  RUNNER_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
  RUNNER_SECRET: z.string().min(16, "RUNNER_SECRET must be at least 16 characters"),
  RUNNER_WORK_DIR: z.string().min(1).default(defaultWorkDir),
  RUNNER_POOL_SIZE: z.coerce.number().int().min(1).max(64).default(2),
  RUNNER_BACKLOG: z.coerce.number().int().min(0).max(256).optional(),
  RUNNER_DRAIN_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  RUNNER_CACHE_MAX_BYTES: z.coerce.number().int().min(0).default(2 * 1024 ** 3),
  RUNNER_UNSAFE_NO_SANDBOX: flag,
  RUNNER_NPM_REGISTRY: z.url().default("https://registry.npmjs.org/"),
  RUNNER_PIP_INDEX_URL: z.url().default("https://pypi.org/simple"),
  RUNNER_LINT_MODULES: z.string().min(1).optional(),
  RUNNER_EGRESS_EXTRA_HOSTS: z.string().optional(),
  RUNNER_CGROUPS: z.enum(["auto", "off"]).default("auto"),
  RUNNER_EXTRA_CA_CERTS: z.string().optional(),
  RUNNER_NODE_BINARIES: z.string().optional(),
  RUNNER_PACKAGE_CACHE_DIR: z.string().min(1).optional(),
});

export interface RunnerConfig {
  host: string;
  port: number;
  secret: string;
  workDir: string;
  poolSize: number;
  /**
   * Jobs taken beyond the free slots, waiting in the pool (docs/runner-protocol.md,
   * "Backpressure"); past it the runner answers "full" and the Worker's queue keeps the job.
   */
  backlog: number;
  /** On shutdown, how long running jobs may finish before they are stopped and handed back. */
  drainMs: number;
  cacheMaxBytes: number;
  unsafeNoSandbox: boolean;
  npmRegistry: string;
  pipIndexUrl: string;
  /**
   * Hosts (`host` or `host:port`, https) prepare jobs may reach besides the two registries:
   * where the registries keep their files. Default: PyPI's file host when the index is PyPI.
   */
  egressExtraHosts: string[];
  /** Per-job control groups when the runner can create them ("auto"), or never ("off"). */
  cgroups: "auto" | "off";
  /** The default Node binary, made visible inside the sandbox as /opt/node/bin/node. */
  nodeBinary: string;
  /**
   * Further Node binaries a repository may ask for (engines, .nvmrc), by path; the runner reads
   * their versions at start. The default binary is always among them (install.ts, "Node").
   */
  extraNodeBinaries: string[];
  /**
   * PEM file of CA certificates the prepare sandbox trusts besides the system's: the CA of a
   * TLS-inspecting proxy between the runner and the registries. Null: the system's only.
   */
  extraCaCerts: string | null;
  /** Package caches (npm, pnpm, yarn), one per organization and slot, kept across prepare jobs. */
  packageCacheDir: string;
  /** node_modules directory holding eslint, @eslint/js, typescript-eslint and typescript for lint jobs. */
  lintModules: string | null;
  /** First uid of the per-slot sandbox users, used when the runner itself runs as root. */
  sandboxUidBase: number;
  /** Largest snapshot or environment archive the runner downloads. */
  maxDownloadBytes: number;
  /** How long an accepted job id is remembered; longer than the signature window. */
  jobMemoryMs: number;
  callbackRetry: { attempts: number; baseDelayMs: number; maxDelayMs: number };
  /** Where the sandbox binary lives; tests point it at a missing path to exercise refusal. */
  bwrapPath: string;
  /** Emits one structured log line; the default writes JSON to stdout. */
  logSink?: (line: string) => void;
}

export type RunnerConfigInput = Partial<RunnerConfig> & { secret: string };

export function defaultConfig(input: RunnerConfigInput): RunnerConfig {
  return {
    host: "127.0.0.1",
    port: 8788,
    workDir: defaultWorkDir,
    poolSize: 2,
    backlog: input.poolSize ?? 2,
    drainMs: 60_000,
    cacheMaxBytes: 2 * 1024 ** 3,
    unsafeNoSandbox: false,
    npmRegistry: "https://registry.npmjs.org/",
    pipIndexUrl: "https://pypi.org/simple",
    egressExtraHosts: defaultExtraHosts(input.npmRegistry ?? "https://registry.npmjs.org/", input.pipIndexUrl ?? "https://pypi.org/simple"),
    cgroups: "auto",
    nodeBinary: process.execPath,
    extraNodeBinaries: [],
    extraCaCerts: null,
    packageCacheDir: join(input.workDir ?? defaultWorkDir, "package-cache"),
    lintModules: defaultLintModules(),
    sandboxUidBase: 61000,
    maxDownloadBytes: 1024 ** 3,
    jobMemoryMs: 3_600_000,
    callbackRetry: { attempts: 8, baseDelayMs: 500, maxDelayMs: 30_000 },
    bwrapPath: existsSync("/usr/bin/bwrap") ? "/usr/bin/bwrap" : "bwrap",
    ...input,
  };
}

/**
 * Where a prepare job's egress socket is made: a short name under the work dir, never the job's
 * own folder, whose name holds the job id (up to 128 characters). A Unix socket's path has at
 * most 107 bytes, so the work dir's length is checked when the runner starts.
 */
export const egressSocketPath = (workDir: string, name: string) => join(workDir, "sockets", `${name}.sock`);
/** The random part of an egress socket's name, in hex digits. */
export const EGRESS_SOCKET_NAME_LENGTH = 12;
const UNIX_SOCKET_PATH_MAX = 107;

/** Why `workDir` cannot hold the runner's sockets, or null when it can. */
export function workDirProblem(workDir: string): string | null {
  const longest = Buffer.byteLength(egressSocketPath(workDir, "x".repeat(EGRESS_SOCKET_NAME_LENGTH)));
  if (longest <= UNIX_SOCKET_PATH_MAX) return null;
  const room = UNIX_SOCKET_PATH_MAX - (longest - Buffer.byteLength(workDir));
  return `RUNNER_WORK_DIR ${workDir} is ${Buffer.byteLength(workDir)} bytes long; the runner's Unix sockets live under it and their paths may have ${UNIX_SOCKET_PATH_MAX} bytes, so it may have at most ${room}: choose a shorter directory`;
}

export function configFromEnv(env: NodeJS.ProcessEnv): RunnerConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid runner configuration: ${problems}`);
  }
  const e = parsed.data;
  const workDirRefusal = workDirProblem(resolve(e.RUNNER_WORK_DIR));
  if (workDirRefusal) throw new Error(`invalid runner configuration: ${workDirRefusal}`);
  return defaultConfig({
    host: e.RUNNER_HOST,
    port: e.RUNNER_PORT,
    secret: e.RUNNER_SECRET,
    workDir: resolve(e.RUNNER_WORK_DIR),
    poolSize: e.RUNNER_POOL_SIZE,
    backlog: e.RUNNER_BACKLOG ?? e.RUNNER_POOL_SIZE,
    drainMs: e.RUNNER_DRAIN_SECONDS * 1000,
    cacheMaxBytes: e.RUNNER_CACHE_MAX_BYTES,
    unsafeNoSandbox: e.RUNNER_UNSAFE_NO_SANDBOX,
    npmRegistry: e.RUNNER_NPM_REGISTRY,
    pipIndexUrl: e.RUNNER_PIP_INDEX_URL,
    cgroups: e.RUNNER_CGROUPS,
    extraCaCerts: e.RUNNER_EXTRA_CA_CERTS ? resolve(e.RUNNER_EXTRA_CA_CERTS) : null,
    extraNodeBinaries: e.RUNNER_NODE_BINARIES === undefined ? [...packagedNodeBinaries(), ...systemNodeBinaries()] : e.RUNNER_NODE_BINARIES.split(",").map((p) => p.trim()).filter(Boolean).map((p) => resolve(p)),
    packageCacheDir: resolve(e.RUNNER_PACKAGE_CACHE_DIR ?? join(resolve(e.RUNNER_WORK_DIR), "package-cache")),
    ...(e.RUNNER_EGRESS_EXTRA_HOSTS !== undefined && { egressExtraHosts: e.RUNNER_EGRESS_EXTRA_HOSTS.split(",").map((h) => h.trim()).filter(Boolean) }),
    ...(e.RUNNER_LINT_MODULES ? { lintModules: resolve(e.RUNNER_LINT_MODULES) } : {}),
  });
}

/**
 * The LTS builds from the registry in sandbox-runner/node-versions (`node-20`, `node-24`, ...),
 * newest first; `npm start` and `npm test` install them (scripts/bootstrap.mjs).
 */
export function packagedNodeBinaries(dir = join(repoRoot, "sandbox-runner", "node-versions", "node_modules")): string[] {
  const names = existsSync(dir) ? readdirSync(dir).filter((n) => /^node-\d+$/.test(n)) : [];
  return names
    .sort((a, b) => Number(b.slice(5)) - Number(a.slice(5)))
    .map((n) => join(dir, n, "bin", "node"))
    .filter((p) => existsSync(p));
}

/** The system's own Node, when it is not the runner's: a further version repositories may ask for. */
function systemNodeBinaries(): string[] {
  return ["/usr/bin/node", "/usr/local/bin/node"].filter((p) => existsSync(p) && p !== process.execPath).slice(0, 1);
}

/**
 * Where the public registries keep their files: PyPI's file host, and the name yarn 1 writes
 * into every lockfile's `resolved` URLs for the npm registry.
 */
function defaultExtraHosts(npmRegistry: string, pipIndexUrl: string): string[] {
  return [
    ...(new URL(npmRegistry).hostname === "registry.npmjs.org" ? ["registry.yarnpkg.com"] : []),
    ...(new URL(pipIndexUrl).hostname === "pypi.org" ? ["files.pythonhosted.org"] : []),
  ];
}
