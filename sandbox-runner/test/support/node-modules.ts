import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { NODE_MODULES_SCRATCH } from "../../src/sandbox";
import { packageClosure, versionOf } from "../../src/tools";

const ROOT_MODULES = resolve(import.meta.dirname, "../../../node_modules");

/**
 * An environment archive (node_modules only) holding `packages` and everything they need,
 * taken from the repository's own node_modules: the sandbox has no network, and a test
 * workspace gets its frameworks the way a prepared task does. Built once per set of
 * packages and versions, and kept in the temporary directory between runs.
 */
export function frameworkEnvironment(packages: string[]): Promise<Buffer> {
  const key = packages.join("\n");
  const known = building.get(key);
  if (known) return known;
  const archive = build(packages);
  building.set(key, archive);
  return archive;
}

/** Archives being built or built by this process, so concurrent tests share one. */
const building = new Map<string, Promise<Buffer>>();

async function build(packages: string[]): Promise<Buffer> {
  const closure = packageClosure(ROOT_MODULES, packages);
  const bins = packages.flatMap((name) => binsOf(name));
  const stamp = createHash("sha256").update(JSON.stringify([closure.map((p) => `${p}@${versionOf(join(ROOT_MODULES, p))}`), bins, NODE_MODULES_SCRATCH])).digest("hex").slice(0, 16);
  const path = join(tmpdir(), `assay-test-env-${stamp}.tar.gz`);
  if (!existsSync(path)) {
    // Another test process may build the same archive at the same time: the rename settles it.
    const staging = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    const entries = closure.map((p) => `node_modules/${p}`);
    // Empty scratch directories, as prepare jobs leave them: test jobs get a writable tmpfs over each (ava's cache, vite's temporary config).
    const scratch = await mkdtemp(join(tmpdir(), "assay-test-env-"));
    for (const dir of NODE_MODULES_SCRATCH) await mkdir(join(scratch, "node_modules", dir), { recursive: true });
    await mkdir(join(scratch, "node_modules", ".bin"));
    for (const { bin, target } of bins) await symlink(target, join(scratch, "node_modules", ".bin", bin));
    try {
      await promisify(execFile)("tar", ["-c", "-I", "gzip -1", "-f", staging, "-C", dirname(ROOT_MODULES), ...entries, "-C", scratch, ...NODE_MODULES_SCRATCH.map((dir) => `node_modules/${dir}`), "node_modules/.bin"], { maxBuffer: 16 * 1024 * 1024 });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    await rename(staging, path);
  }
  return readFile(path);
}

/**
 * The package's own bins, each as the link npm makes (`.bin/<name>` to the package's file). Made
 * here, not copied from the root's .bin: there two packages may claim one name (typescript and
 * an alias of another major both bring tsc) and the link goes to either.
 */
function binsOf(name: string): { bin: string; target: string }[] {
  const pkg = JSON.parse(readFileSync(join(ROOT_MODULES, name, "package.json"), "utf8")) as { bin?: string | Record<string, string> };
  const declared = typeof pkg.bin === "string" ? { [basename(name)]: pkg.bin } : (pkg.bin ?? {});
  return Object.entries(declared).map(([bin, file]) => ({ bin, target: join("..", name, file) }));
}

/**
 * `spec` (`mocha@8`) installed from the registry by npm into a tiny project under `scratch`
 * (npm's cache makes a second run quick), as an environment archive: node_modules, with the
 * scratch directories prepare jobs leave.
 */
export async function registryEnvironment(spec: string, scratch: string): Promise<Buffer> {
  const dir = join(scratch, spec.replace(/[^\w.-]/g, "_"));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "majors", version: "1.0.0", private: true }));
  await promisify(execFile)("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--save-dev", spec], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  for (const name of NODE_MODULES_SCRATCH) await mkdir(join(dir, "node_modules", name), { recursive: true });
  await promisify(execFile)("tar", ["-c", "-I", "gzip -1", "-f", join(dir, "env.tar.gz"), "-C", dir, "node_modules"]);
  return readFile(join(dir, "env.tar.gz"));
}
