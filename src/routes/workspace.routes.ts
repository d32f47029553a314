import { z } from "zod";
import { bytesToBase64 } from "../domain/overlay";
import { attemptView } from "../flows/attempts.flow";
import { scoreReportView } from "../flows/scores.flow";
import { workspaceFile, workspaceFiles } from "../flows/workspace-files.flow";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { visibleAttempt, visibleTask } from "../http/visibility";
import { AttemptSchema } from "./attempts.routes";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import { CandidateScoreReportSchema, ScoreReportSchema } from "./schemas";
import { TaskSchema, taskView } from "./task-fields";
import type { RouteTable } from "./table";

const WorkspaceFileSchema = z
  .object({
    path: z.string(),
    origin: z.enum(["snapshot", "added"]).describe("snapshot: a file of the task's snapshot; added: only in the attempt's changes"),
    changed: z.boolean().describe("The attempt's changes upsert or delete it"),
    deleted: z.boolean().describe("The attempt's changes delete it"),
  })
  .meta({ id: "WorkspaceFile" });

export class GetWorkspaceFiles extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "The attempt's files: the task's snapshot with the changes overlay on top",
    description:
      "Every file of the task's snapshot (at its base commit) and every file the overlay adds, sorted by path, each " +
      "marked changed or deleted by the overlay. For the attempt's candidate and its organization's staff. The " +
      "web app's file tree; the contents are at `GET .../files/content?path=`.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The files", z.object({ attempt_id: z.string(), items: z.array(WorkspaceFileSchema) })),
      "404": attemptNotFound,
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt } = await visibleAttempt(db, caller, params.attempt_id);
    return { attempt_id: attempt.id, items: await workspaceFiles(env, attempt) };
  }
}

const WorkspaceViewSchema = z
  .object({
    attempt: AttemptSchema,
    task: TaskSchema,
    files: z.array(WorkspaceFileSchema),
    score_report: z
      .discriminatedUnion("view", [ScoreReportSchema, CandidateScoreReportSchema])
      .nullable()
      .describe("Once scored, the report as `GET .../score-report` gives it to the caller; null before"),
  })
  .meta({ id: "WorkspaceView" });

export class GetWorkspaceView extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "The attempt's page in one request: the attempt, its task, its files and, once scored, its score report",
    description:
      "`attempt` as `GET /attempts/{attempt_id}` gives it, `task` as `GET /tasks/{task_id}` gives it to the caller " +
      "(candidates get the candidate view), `files` as `GET .../files` lists them, and `score_report` as " +
      "`GET .../score-report` gives it once scoring has finished (null before). The web app opens an attempt with this " +
      "and the open file's content: two requests. For the attempt's candidate and its organization's staff; 404 when " +
      "the caller may not see the attempt, or its task.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The attempt's page", WorkspaceViewSchema),
      "404": jsonResponse("No such attempt, or one (or a task) the caller may not see", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt, audience } = await visibleAttempt(db, caller, params.attempt_id);
    const { task, audience: taskAudience, ...reading } = await visibleTask(db, caller, attempt.taskId);
    const [view, files] = await Promise.all([attemptView(env, attempt, audience), workspaceFiles(env, attempt)]);
    // Asked only once scored: before, the report is a 404 that costs a read of its own.
    const report = view.scoring.status === "scored" ? await scoreReportView(env, attempt.id, audience) : undefined;
    return { attempt: view, task: taskView(task, taskAudience, reading), files, score_report: report?.ok ? report.value : null };
  }
}

export class GetWorkspaceFileContent extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "One file of the attempt as it is now: the overlay's content, else the snapshot's",
    description:
      "For the attempt's candidate and its organization's staff. 404 when the path is no file of the attempt or the " +
      "overlay deletes it; 413 for a snapshot file larger than an overlay file may be (it could not be saved back).",
    request: { params: AttemptIdParam, query: z.object({ path: RepoPath.describe("A repository path") }) },
    responses: {
      "200": jsonResponse(
        "The file",
        z.object({
          path: z.string(),
          origin: z.enum(["overlay", "snapshot"]),
          size: z.number().int(),
          content_b64: z.string().describe("The content, base64"),
        }),
      ),
      "404": jsonResponse("No such attempt, one the caller may not see, or no such file of it", ErrorSchema),
      "413": jsonResponse("The file is too large to open for editing", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const { attempt } = await visibleAttempt(db, caller, params.attempt_id);
    const file = unwrap(await workspaceFile(env, attempt, query.path));
    return { path: file.path, origin: file.origin, size: file.content.length, content_b64: bytesToBase64(file.content) };
  }
}

export const workspaceRoutes: RouteTable = [
  ["GET", "/attempts/:attempt_id/workspace", GetWorkspaceView],
  ["GET", "/attempts/:attempt_id/files", GetWorkspaceFiles],
  ["GET", "/attempts/:attempt_id/files/content", GetWorkspaceFileContent],
];
