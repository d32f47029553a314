import { z } from "zod";
import { overlayPathProblem } from "../domain/overlay";
import { jsonResponse } from "../http/endpoint";
import { ErrorSchema } from "../http/errors";

export const OrgIdParam = z.object({
  org_id: z.string().min(1).max(128).regex(/^[A-Za-z0-9._-]+$/, "letters, digits, '.', '_' and '-' only"),
});

export const TaskIdParam = z.object({ task_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "not a task id") });

export const AttemptIdParam = z.object({
  attempt_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "not an attempt id"),
});

/** The 404 of a route on one attempt (`AttemptIdParam`). */
export const attemptNotFound = jsonResponse("No such attempt, or one the caller may not see", ErrorSchema);

/** A repository path as the overlay takes it (docs/api.md, "Changes overlay"). */
export const RepoPath = z.string().superRefine((path, ctx) => {
  const problem = overlayPathProblem(path);
  if (problem) ctx.addIssue({ code: "custom", message: problem, params: { type: "invalid_path" } });
});
