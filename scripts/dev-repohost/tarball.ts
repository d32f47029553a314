import type { ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { spawnGit } from "./git.js";
import type { LocalRepo } from "./repositories.js";

/** GitHub names the single top-level folder of a tarball <owner>-<repo>-<7-char sha>. */
export function tarballFolder(repo: LocalRepo, sha: string): string {
  return `${repo.owner}-${repo.name}-${sha.slice(0, 7)}`;
}

/**
 * Streams the gzip tarball of a commit. git archive of a commit id also writes the pax
 * header carrying the commit id, as GitHub's tarballs have.
 */
export async function sendTarball(res: ServerResponse, repo: LocalRepo, sha: string, headers: Record<string, string>): Promise<void> {
  const folder = tarballFolder(repo, sha);
  const git = spawnGit(repo.gitDir, ["archive", "--format=tar", `--prefix=${folder}/`, sha]);
  git.stdin.end();
  const stderr: Buffer[] = [];
  git.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number | null>((resolve) => git.on("close", resolve));
  res.writeHead(200, {
    ...headers,
    "content-type": "application/x-gzip",
    "content-disposition": `attachment; filename=${folder}.tar.gz`,
  });
  try {
    await pipeline(git.stdout, createGzip(), res);
  } catch (error) {
    // The client went away or gzip failed: git has nobody to write to.
    git.kill();
    throw error;
  }
  const code = await exited;
  if (code !== 0) throw new Error(`git archive failed for ${repo.fullName}@${sha}: ${Buffer.concat(stderr).toString("utf8")}`);
}
