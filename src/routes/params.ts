import { z } from "zod";
import { overlayPathProblem } from "../domain/overlay";
import { RUN_LIMITS } from "../domain/runs";
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

const { urlTtlSeconds } = RUN_LIMITS;
/** How long presigned artifact URLs (run and import logs and reports) live. */
export const UrlTtl = z.coerce
  .number()
  .int()
  .min(urlTtlSeconds.min)
  .max(urlTtlSeconds.max)
  .default(urlTtlSeconds.default)
  .describe(`Lifetime of the artifact URLs, ${urlTtlSeconds.min}–${urlTtlSeconds.max} s (default ${urlTtlSeconds.default})`);
