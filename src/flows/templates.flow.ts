import { database } from "../db/client";
import { insertTemplateTask, oldestTemplateCopySince, type TaskRow } from "../db/tasks.queries";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
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
import { findTemplate, TEMPLATES, type CatalogueTemplate } from "../services/templates/catalogue";
import { queueImport } from "./task-import/import-start.flow";

export type { CatalogueTemplate } from "../services/templates/catalogue";

/** The catalogue's templates in a language and with a tag, when given; ordered by id. */
export function templateListing(filter: { language?: string; tag?: string }): Listing<CatalogueTemplate> {
  const matching = TEMPLATES.filter(
    (t) => (filter.language === undefined || t.language === filter.language) && (filter.tag === undefined || t.tags.includes(filter.tag)),
  );
  return {
    count: async () => matching.length,
    page: async (limit, offset) => matching.slice(offset, offset + limit),
  };
}

export function catalogueTemplate(id: string): Outcome<CatalogueTemplate> {
  const template = findTemplate(id);
  return template ? accept(template) : refuse("not_found", `Template ${id} not found`);
}

export interface TemplateCopyRequest {
  templateId: string;
  organizationId: string;
  visibility: TaskVisibility;
  /** The template's own tags when not given. */
  tags: string[] | undefined;
  aiAssistance: boolean;
  /** The user copying, whose copies count against the limit. */
  createdBy: string;
}

/**
 * Copies a template into an organization: a task in IMPORTING whose source is the template,
 * with the template's statement, queued on task-import as an imported pull request is. The
 * same consumer then snapshots and splits it (reading the catalogue through the template repo
 * host) and validates it to READY. Refused for a template not in the catalogue, and, with the
 * seconds to wait, when the user is at the copy limit.
 */
export async function copyTemplate(env: Env, request: TemplateCopyRequest): Promise<Outcome<TaskRow>> {
  const found = catalogueTemplate(request.templateId);
  if (!found.ok) return found;
  const template = found.value;
  const db = database(env.DB);
  const now = new Date();
  const at = now.toISOString();
  const since = templateCopyWindowStart(now);
  const task = await insertTemplateTask(
    db,
    {
      id: newId("tsk"),
      organizationId: request.organizationId,
      visibility: request.visibility,
      tags: request.tags ?? template.tags,
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
    const retryAfterSeconds = templateCopyRetryAfterSeconds(oldest, now);
    const detail =
      `You have copied ${TEMPLATE_COPY_LIMIT.copies} templates in the last ${TEMPLATE_COPY_LIMIT.windowSeconds} seconds, ` +
      `the most allowed per user; retry after ${retryAfterSeconds} seconds`;
    return { ok: false, refusal: { kind: "rate_limited", detail, retryAfterSeconds } };
  }
  await queueImport(env, task.id, "copy the template again");
  return accept(task);
}
