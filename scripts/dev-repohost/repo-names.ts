import path from "node:path";
import { z } from "zod";

/**
 * Names as GitHub accepts them, and nothing that could name a path outside the root:
 * no separators, no "." or "..", no encoded characters (segments are checked after decoding).
 */
export const ownerName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$/, "invalid owner name");
export const repoName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,100}$/, "invalid repository name")
  .refine((name) => name !== "." && name !== "..", "invalid repository name");

/** "owner/name" as used in full_name and in fault injection. */
export const fullRepoName = z.string().transform((value, ctx) => {
  const [owner, name, ...rest] = value.split("/");
  const parsedOwner = ownerName.safeParse(owner);
  const parsedName = repoName.safeParse(name);
  if (rest.length > 0 || !parsedOwner.success || !parsedName.success) {
    ctx.addIssue({ code: "custom", message: "expected owner/name" });
    return z.NEVER;
  }
  return { owner: parsedOwner.data, name: parsedName.data };
});

/** A pull request number: positive, without leading zeros, so "01" and "1" are not two names for one PR. */
export const pullNumber = z
  .string()
  .regex(/^[1-9][0-9]{0,8}$/, "invalid pull request number")
  .transform(Number);

/**
 * A branch, tag or commit id as the tarball endpoint accepts it. Revision syntax (ranges,
 * "^", "~", "@{", ":") and a leading "-" (an option to git) are refused.
 */
export const refName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}$/, "invalid ref")
  .refine((ref) => !ref.includes("..") && !ref.includes("//") && !ref.endsWith("/") && !ref.endsWith(".lock"), "invalid ref");

/** The directory of repository owner/name under root; the names must already be validated. */
export function repoDirectory(root: string, owner: string, name: string): string {
  const base = path.resolve(root);
  const dir = path.resolve(base, ownerName.parse(owner), repoName.parse(name));
  if (!dir.startsWith(base + path.sep)) throw new Error(`repository path escapes the root: ${owner}/${name}`);
  return dir;
}
