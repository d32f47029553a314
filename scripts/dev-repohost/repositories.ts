import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { gitTextOrNull, runGit } from "./git.js";
import { repoDirectory } from "./repo-names.js";

/** A git repository found at <root>/<owner>/<name>. */
export interface LocalRepo {
  owner: string;
  name: string;
  fullName: string;
  gitDir: string;
}

/** Who may read a repository: anyone, or (private) holders of one of its tokens. */
export interface RepoAccess {
  private: boolean;
  tokens: string[];
}

async function isDirectory(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() ?? false;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isFile() ?? false;
}

async function looksLikeGitDir(dir: string): Promise<boolean> {
  return (await isFile(path.join(dir, "HEAD"))) && (await isDirectory(path.join(dir, "objects")));
}

/**
 * The git directory of a repository, found by looking at the files rather than by git's
 * discovery, which would walk up into whatever repository contains the root.
 */
async function locateGitDir(dir: string): Promise<string | null> {
  const dotGit = path.join(dir, ".git");
  if (await looksLikeGitDir(dotGit)) return dotGit;
  if (await isFile(dotGit)) {
    const match = /^gitdir: (.+)$/m.exec(await readFile(dotGit, "utf8"));
    const linked = match?.[1] ? path.resolve(dir, match[1].trim()) : null;
    return linked && (await looksLikeGitDir(linked)) ? linked : null;
  }
  return (await looksLikeGitDir(dir)) ? dir : null;
}

/** Finds owner/name under root, bare or not; null when there is no repository there. Names must be validated. */
export async function findRepo(root: string, owner: string, name: string): Promise<LocalRepo | null> {
  const gitDir = await locateGitDir(repoDirectory(root, owner, name));
  return gitDir ? { owner, name, fullName: `${owner}/${name}`, gitDir } : null;
}

/** Reads assay.private and assay.token from the repository's own config. */
export async function readAccess(repo: LocalRepo): Promise<RepoAccess> {
  const isPrivate = await gitTextOrNull(repo.gitDir, ["config", "--type=bool", "--get", "assay.private"]);
  const tokens = await gitTextOrNull(repo.gitDir, ["config", "--get-all", "assay.token"]);
  return {
    private: isPrivate === "true",
    tokens: tokens ? tokens.split("\n").filter((token) => token.length > 0) : [],
  };
}

export async function defaultBranch(repo: LocalRepo): Promise<string> {
  return (await gitTextOrNull(repo.gitDir, ["symbolic-ref", "--short", "-q", "HEAD"])) ?? "main";
}

/** The commit id a ref or commit id names, or null when it names none. The ref must be validated. */
export async function resolveCommit(repo: LocalRepo, ref: string): Promise<string | null> {
  return gitTextOrNull(repo.gitDir, ["rev-parse", "--verify", "-q", "--end-of-options", `${ref}^{commit}`]);
}

/** Committer date (ISO 8601) of the newest commit on any ref, or null for an empty repository. */
export async function lastPushDate(repo: LocalRepo): Promise<string | null> {
  const out = await runGit(repo.gitDir, ["for-each-ref", "--sort=-committerdate", "--count=1", "--format=%(committerdate:iso-strict)"]);
  const date = out.toString("utf8").trim();
  return date === "" ? null : date;
}
