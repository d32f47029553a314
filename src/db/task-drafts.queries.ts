import { and, count, desc, eq, inArray, isNotNull, isNull, type SQL } from "drizzle-orm";
import { staffOrganization } from "./accounts.queries";
import type { Database } from "./client";
import { tasks } from "./schema";
import type { TaskRow } from "./tasks.queries";
import type { Viewer } from "../domain/roles";
import type { TaskStatus } from "../domain/tasks";

/**
 * Drafts are task rows of origin `draft` (docs/task-builder.md): the import pipeline prepares
 * and validates them as it does any task, and publishing only sets published_at.
 */
const isDraft = eq(tasks.origin, "draft");

export async function findDraft(db: Database, draftId: string): Promise<TaskRow | undefined> {
  return db.select().from(tasks).where(and(eq(tasks.id, draftId), isDraft)).get();
}

export interface DraftFilter {
  organizationId?: string;
  /** Pipeline statuses of unpublished drafts; `published` selects the published ones instead. */
  statuses?: TaskStatus[];
  published?: boolean;
}

/** Drafts of the organizations whose staff the viewer is. */
export function listableDrafts(viewer: Viewer, filter: DraftFilter): SQL | undefined {
  return and(
    isDraft,
    staffOrganization(tasks.organizationId, viewer),
    filter.organizationId ? eq(tasks.organizationId, filter.organizationId) : undefined,
    filter.statuses ? inArray(tasks.status, filter.statuses) : undefined,
    filter.published === undefined ? undefined : filter.published ? isNotNull(tasks.publishedAt) : isNull(tasks.publishedAt),
  );
}

export async function countDrafts(db: Database, where: SQL | undefined): Promise<number> {
  return (await db.select({ n: count() }).from(tasks).where(where).get())?.n ?? 0;
}

export async function draftPage(db: Database, where: SQL | undefined, limit: number, offset: number): Promise<TaskRow[]> {
  return db.select().from(tasks).where(where).orderBy(desc(tasks.createdAt), desc(tasks.id)).limit(limit).offset(offset).all();
}

/**
 * Starts a draft's preparation and validation over, reading the issue and the pull request
 * again: only an unpublished draft whose last validation ended (VALIDATED or FAILED) may.
 * Undefined when the draft is not in such a state, which the caller explains.
 */
export async function restartDraft(db: Database, draftId: string, now: string): Promise<TaskRow | undefined> {
  return db
    .update(tasks)
    .set({
      status: "IMPORTING",
      failureReason: null,
      prepareJobId: null,
      baseRunJobId: null,
      solutionRunJobId: null,
      failToPass: null,
      passToPass: null,
      preparingAt: null,
      validatingAt: null,
      readyAt: null,
      updatedAt: now,
    })
    .where(and(eq(tasks.id, draftId), isDraft, isNull(tasks.publishedAt), inArray(tasks.status, ["READY", "FAILED"])))
    .returning()
    .get();
}

/** Publishes a validated draft; undefined when it is not an unpublished READY draft (a second publish among them). */
export async function publishDraft(db: Database, draftId: string, now: string): Promise<TaskRow | undefined> {
  return db
    .update(tasks)
    .set({ publishedAt: now, updatedAt: now })
    .where(and(eq(tasks.id, draftId), isDraft, isNull(tasks.publishedAt), eq(tasks.status, "READY")))
    .returning()
    .get();
}
