import { database } from "../db/client";
import { insertTemplateTask, oldestTemplateCopySince, type TaskRow } from "../db/tasks";
import type { TaskVisibility } from "../domain/tasks";
import {
  TEMPLATE_COPY_LIMIT,
  TEMPLATE_PULL_NUMBER,
  TEMPLATE_SOURCE_HOST,
  TEMPLATE_SOURCE_OWNER,
  templateCopyRetryAfterSeconds,
  templateCopyWindowStart,
  templatePath,
} from "../domain/templates";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import type { CatalogueTemplate } from "../services/templates/catalogue";
import { queueImport } from "./task-import/start";

export interface TemplateCopyRequest {
  template: CatalogueTemplate;
  organizationId: string;
  visibility: TaskVisibility;
  tags: string[];
  aiAssistance: boolean;
  /** The user copying, whose copies count against the limit. */
  createdBy: string;
}

export type TemplateCopy = { copied: true; task: TaskRow } | { copied: false; retryAfterSeconds: number };

/**
 * Copies a template into an organization: a task in IMPORTING whose source is the template,
 * with the template's statement, queued on task-import as an imported pull request is. The
 * same consumer then snapshots and splits it (reading the catalogue through the template repo
 * host) and validates it to READY. Refused, with the seconds to wait, when the user is at the
 * copy limit.
 */
export async function copyTemplate(env: Env, request: TemplateCopyRequest): Promise<TemplateCopy> {
  const db = database(env.DB);
  const { template } = request;
  const now = new Date();
  const at = now.toISOString();
  const since = templateCopyWindowStart(now);
  const task = await insertTemplateTask(
    db,
    {
      id: newId("tsk"),
      organizationId: request.organizationId,
      visibility: request.visibility,
      tags: request.tags,
      title: template.title,
      status: "IMPORTING",
      origin: "template",
      templateSlug: template.slug,
      sourceHost: TEMPLATE_SOURCE_HOST,
      sourceApiBase: TEMPLATE_SOURCE_HOST,
      sourceOwner: TEMPLATE_SOURCE_OWNER,
      sourceRepo: template.slug,
      prNumber: TEMPLATE_PULL_NUMBER,
      prUrl: templatePath(template.slug),
      statementTitle: template.statement.title,
      statementBody: template.statement.body,
      timeLimitMinutes: template.time_limit_minutes,
      aiAssistance: request.aiAssistance,
      createdBy: request.createdBy,
      createdAt: at,
      updatedAt: at,
      publishedAt: at,
    },
    { copies: TEMPLATE_COPY_LIMIT.copies, since },
  );
  if (!task) {
    const oldest = await oldestTemplateCopySince(db, request.createdBy, since);
    return { copied: false, retryAfterSeconds: templateCopyRetryAfterSeconds(oldest, now) };
  }
  await queueImport(env, task.id, "copy the template again");
  return { copied: true, task };
}
