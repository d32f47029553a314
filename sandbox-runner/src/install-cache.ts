import { createHash } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { InstallStep, NodeChoice, RepoFacts } from "./install";
import type { InstallReport } from "../../protocol/callback";
import { readRegularFile } from "./workspace-fs";

/**
 * Environments of earlier installs, by what decided them: a prepare job whose install would
 * be the same (same organization, steps, Node and Python, same manifests and lockfiles) takes
 * the archive the first one made instead of installing again. This is what makes a second
 * import of a repository, or a retry, ready in seconds. An install whose result depends on
 * more than those files (local `file:` packages, workspaces) is never reused.
 */

/** The files whose bytes decide an install, besides the steps themselves. */
const DECIDING_FILES = [
  "package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", ".npmrc", ".yarnrc", ".yarnrc.yml",
  "pyproject.toml", "setup.py", "setup.cfg",
];
const FILE_MAX_BYTES = 64 * 1024 * 1024;

export interface ReusedEnvironment {
  archive: string;
  sha256: string;
  size: number;
  report: InstallReport;
}

export class InstallCache {
  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  /** The key of an install, or null when its result may depend on more than the deciding files. */
  async keyOf(workspace: string, orgId: string | null, facts: RepoFacts, steps: InstallStep[], node: NodeChoice, python: string | null): Promise<string | null> {
    if (steps.length === 0) return null;
    const pkg = facts.pkg;
    const deps = { ...pkg?.dependencies, ...pkg?.devDependencies, ...pkg?.optionalDependencies };
    if (pkg?.workspaces !== undefined || Object.values(deps).some((spec) => typeof spec === "string" && /^(file|link|portal):/.test(spec))) return null;
    if ((await readRegularFile(join(workspace, "pnpm-workspace.yaml"), 1)) !== null) return null;
    const hash = createHash("sha256");
    hash.update(JSON.stringify({ orgId, steps: steps.map((s) => [s.argv, s.fallback?.argv ?? null]), node: node.version, python }));
    for (const name of [...DECIDING_FILES, ...facts.requirementFiles]) {
      const bytes = await readRegularFile(join(workspace, name), FILE_MAX_BYTES);
      hash.update(`\0${name}\0${bytes === null ? "-" : createHash("sha256").update(bytes).digest("hex")}`);
    }
    return hash.digest("hex");
  }

  async find(key: string): Promise<ReusedEnvironment | null> {
    const meta = await readFile(join(this.dir, `${key}.json`), "utf8").catch(() => null);
    if (!meta) return null;
    const archive = join(this.dir, `${key}.tar.gz`);
    const now = new Date();
    if (!(await utimes(archive, now, now).then(() => true, () => false))) return null;
    return { archive, ...(JSON.parse(meta) as Omit<ReusedEnvironment, "archive">) };
  }

  /** Keeps a copy of an install's archive under its key, then trims the oldest past the byte budget. */
  async store(key: string, archive: string, entry: Omit<ReusedEnvironment, "archive">): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, `${key}.tar.gz`);
    await copyFile(archive, `${target}.tmp`);
    await rename(`${target}.tmp`, target);
    await writeFile(join(this.dir, `${key}.json`), JSON.stringify(entry));
    await this.trim();
  }

  private async trim(): Promise<void> {
    const names = (await readdir(this.dir)).filter((n) => n.endsWith(".tar.gz"));
    const entries = await Promise.all(names.map(async (n) => ({ n, s: await stat(join(this.dir, n)).catch(() => null) })));
    const live = entries.filter((e) => e.s !== null).sort((a, b) => (b.s?.mtimeMs ?? 0) - (a.s?.mtimeMs ?? 0));
    let total = 0;
    for (const { n, s } of live) {
      total += s?.size ?? 0;
      if (total <= this.maxBytes) continue;
      const key = n.slice(0, -".tar.gz".length);
      await rm(join(this.dir, n), { force: true });
      await rm(join(this.dir, `${key}.json`), { force: true });
    }
  }
}
