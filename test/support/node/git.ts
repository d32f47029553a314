import { execFile } from "node:child_process";
import { promisify } from "node:util";

const exec = promisify(execFile);

/** git with no user or system configuration and a fixed author, so tests make the same commits anywhere. */
const gitEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "T",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "T",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

/** Runs git in `cwd`; its stdout as bytes (diffs may hold any). */
export async function git(cwd: string, args: string[]): Promise<Buffer> {
  return (await exec("git", args, { cwd, env: gitEnv, encoding: "buffer", maxBuffer: 256 * 1024 * 1024 })).stdout;
}
