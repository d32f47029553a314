/**
 * Rules of the assessment that the Worker enforces and the web app states to its users, written
 * once: the roles, the subscores of a score report, and what a file path of an attempt may be.
 * The Worker's domain/ re-exports them (roles.ts, scoring.ts, overlay.ts); the web app imports
 * them from here (the dependency rules let web/ import this file and socket-messages.ts of
 * protocol/). No imports, so it costs the browser nothing but itself.
 */

/** The roles carried in session tokens, lowest first. */
export const ROLES = ["candidate", "interviewer", "orgadmin", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Interviewer and above: the roles that may use the console in an organization. */
export const STAFF_ROLES = ROLES.slice(ROLES.indexOf("interviewer")) as readonly Exclude<Role, "candidate">[];

export function isStaffRole(role: string | null | undefined): role is (typeof STAFF_ROLES)[number] {
  return (STAFF_ROLES as readonly (string | null | undefined)[]).includes(role);
}

/** The five subscores of a score report (docs/scoring.md), in the rubric's order: by weight, correctness first. */
export const SUBSCORES = ["correctness", "test_coverage", "code_quality", "behavior", "communication"] as const;
export type SubscoreName = (typeof SUBSCORES)[number];

/** The longest file path of an attempt, in UTF-8 bytes. */
export const FILE_PATH_MAX_BYTES = 1024;

/** Why a path cannot name a file of an attempt; each side says it in its own words. */
export type FilePathProblem =
  | "empty"
  | "too_long"
  | "control_character"
  | "backslash"
  | "absolute"
  | "empty_segment"
  | "dot_dot_segment"
  | "dot_segment"
  | "git_directory";

/**
 * Why `path` cannot name a file of the repository, or undefined. A path is relative, in
 * normal form (segments joined by single `/`, no `.` or `..` segments), without control
 * characters or backslashes (which some sandboxes and clients read as separators), at most
 * FILE_PATH_MAX_BYTES, and not inside any `.git` directory (in any letter case, as
 * case-insensitive file systems see it).
 */
export function filePathProblem(path: string): FilePathProblem | undefined {
  if (path.length === 0) return "empty";
  if (new TextEncoder().encode(path).byteLength > FILE_PATH_MAX_BYTES) return "too_long";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return "control_character";
  if (path.includes("\\")) return "backslash";
  if (path.startsWith("/")) return "absolute";
  for (const segment of path.split("/")) {
    if (segment === "") return "empty_segment";
    if (segment === "..") return "dot_dot_segment";
    if (segment === ".") return "dot_segment";
    if (segment.toLowerCase() === ".git") return "git_directory";
  }
  return undefined;
}
