import { join } from "node:path";
import { z } from "zod";
import { readRegularFile } from "../workspace-fs";

const packageJsonSchema = z.looseObject({
  scripts: z.record(z.string(), z.string()).optional(),
  dependencies: z.record(z.string(), z.unknown()).optional(),
  devDependencies: z.record(z.string(), z.unknown()).optional(),
  optionalDependencies: z.record(z.string(), z.unknown()).optional(),
});
export type PackageJson = z.infer<typeof packageJsonSchema>;

/** What a repository declares, as the framework modules read it. */
export interface Repo {
  workspace: string;
  pkg: PackageJson | null;
  /** A top-level file's text (config files, manifests), or null when it is missing or not a regular file. */
  read(name: string): Promise<string | null>;
  /** Whether the package.json names `name` in dependencies or devDependencies. */
  depends(name: string): boolean;
}

const MANIFEST_MAX_BYTES = 1024 * 1024;

export async function readManifest(workspace: string, name: string): Promise<string | null> {
  return (await readRegularFile(join(workspace, name), MANIFEST_MAX_BYTES))?.toString("utf8") ?? null;
}

export async function readPackageJson(workspace: string): Promise<PackageJson | null> {
  const text = await readManifest(workspace, "package.json");
  if (text === null) return null;
  try {
    const parsed = packageJsonSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function openRepo(workspace: string, pkg: PackageJson | null): Repo {
  const cache = new Map<string, Promise<string | null>>();
  return {
    workspace,
    pkg,
    read: (name) => {
      const known = cache.get(name);
      if (known) return known;
      const text = readManifest(workspace, name);
      cache.set(name, text);
      return text;
    },
    depends: (name) => Object.hasOwn(pkg?.dependencies ?? {}, name) || Object.hasOwn(pkg?.devDependencies ?? {}, name),
  };
}

/** Whether any of `names` is a top-level regular file. */
export async function anyConfig(repo: Repo, names: string[]): Promise<boolean> {
  for (const name of names) if ((await repo.read(name)) !== null) return true;
  return false;
}

/** The package.json key (`"jest": {…}`) some frameworks take their configuration from. */
export const hasPackageKey = (repo: Repo, key: string) => repo.pkg !== null && Object.hasOwn(repo.pkg, key);

/** `name.js`, `name.ts`, … for every extension a JavaScript config file is written in. */
export const configNames = (base: string, extensions = ["js", "cjs", "mjs", "ts", "cts", "mts", "json"]) => extensions.map((ext) => `${base}.${ext}`);
