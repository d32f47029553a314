import { and, count, desc, eq, inArray, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import { roleIn, type MembershipSource, type Viewer } from "../domain/roles";
import { NO_SETTINGS } from "../domain/task-settings";
import { taskAudience, type TaskAudience, type TaskStatus } from "../domain/tasks";
import { staffOrganization } from "./accounts.queries";
import type { Database } from "./client";
import { rowValues } from "./rows";
import { memberships, organizations, taskAssignments, tasks } from "./schema";

export type TaskRow = typeof tasks.$inferSelect;
export type NewTask = typeof tasks.$inferInsert;

/** The viewer's membership of a task's organization and assignment to the task, which its audience depends on. */
const viewerMembership = (viewer: Viewer) =>
  and(eq(memberships.organizationId, tasks.organizationId), eq(memberships.userId, viewer.userId));
const viewerAssignment = (viewer: Viewer) => and(eq(taskAssignments.taskId, tasks.id), eq(taskAssignments.userId, viewer.userId));

function audienceOf(viewer: Viewer, task: TaskRow, membership: MembershipSource | null, assigned: boolean): TaskAudience {
  return taskAudience({
    published: task.publishedAt !== null,
    visibility: task.visibility,
    status: task.status,
    archived: task.archivedAt !== null,
    orgRole: roleIn(viewer, task.organizationId, membership),
    platformAdmin: viewer.role === "admin",
    assignedToCaller: assigned,
  });
}

/** A task as one viewer reads it: with its organization's name, and when it was assigned to the viewer (null: not assigned). */
export interface TaskReading {
  organizationName: string;
  assignedAt: string | null;
}

/**
 * The one visibility check on a task: the task and how the viewer sees it ("staff" sees
 * everything, "candidate" the candidate view), or undefined when the viewer may not see it
 * at all, as if it did not exist.
 */
export async function findVisibleTask(
  db: Database,
  viewer: Viewer,
  taskId: string,
): Promise<({ task: TaskRow; audience: Exclude<TaskAudience, "none"> } & TaskReading) | undefined> {
  const row = await db
    .select({ task: tasks, membership: memberships.source, assignedAt: taskAssignments.assignedAt, organizationName: organizations.name })
    .from(tasks)
    .innerJoin(organizations, eq(organizations.id, tasks.organizationId))
    .leftJoin(memberships, viewerMembership(viewer))
    .leftJoin(taskAssignments, viewerAssignment(viewer))
    .where(eq(tasks.id, taskId))
    .get();
  if (!row) return undefined;
  const audience = audienceOf(viewer, row.task, row.membership, row.assignedAt !== null);
  return audience === "none" ? undefined : { task: row.task, audience, organizationName: row.organizationName, assignedAt: row.assignedAt };
}

export async function findTask(db: Database, taskId: string): Promise<TaskRow | undefined> {
  return db.select().from(tasks).where(eq(tasks.id, taskId)).get();
}

export interface TaskFilter {
  /** Archived tasks instead of active ones. */
  archived: boolean;
  status?: TaskStatus;
  organizationId?: string;
  tag?: string;
}

/**
 * Tasks a viewer may list: all of the organizations where they are staff (every one for a
 * platform admin), and unarchived ones assigned to them or READY and public. It reads the
 * viewer's assignment, which countTasks and taskPage join.
 */
export function listableTasks(viewer: Viewer, filter: TaskFilter): SQL | undefined {
  const visible =
    viewer.role === "admin"
      ? undefined
      : or(
          staffOrganization(tasks.organizationId, viewer),
          and(
            isNull(tasks.archivedAt),
            or(isNotNull(taskAssignments.userId), and(eq(tasks.visibility, "PUBLIC"), eq(tasks.status, "READY"))),
          ),
        );
  return and(
    visible,
    isNotNull(tasks.publishedAt),
    filter.archived ? isNotNull(tasks.archivedAt) : isNull(tasks.archivedAt),
    filter.status ? eq(tasks.status, filter.status) : undefined,
    filter.organizationId ? eq(tasks.organizationId, filter.organizationId) : undefined,
    filter.tag ? sql`EXISTS (SELECT 1 FROM json_each(${tasks.tags}) WHERE value = ${filter.tag})` : undefined,
  );
}

export async function countTasks(db: Database, viewer: Viewer, where: SQL | undefined): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(tasks)
    .leftJoin(memberships, viewerMembership(viewer))
    .leftJoin(taskAssignments, viewerAssignment(viewer))
    .where(where)
    .get();
  return row?.n ?? 0;
}

/**
 * A page of tasks: those assigned to the viewer first, newest assignment first, then the others newest
 * first; each with how the viewer sees it, its organization's name and the viewer's assignment.
 */
export async function taskPage(
  db: Database,
  viewer: Viewer,
  where: SQL | undefined,
  limit: number,
  offset: number,
): Promise<({ task: TaskRow; audience: TaskAudience } & TaskReading)[]> {
  const rows = await db
    .select({ task: tasks, membership: memberships.source, assigned: taskAssignments.userId, assignedAt: taskAssignments.assignedAt, organizationName: organizations.name })
    .from(tasks)
    .innerJoin(organizations, eq(organizations.id, tasks.organizationId))
    .leftJoin(memberships, viewerMembership(viewer))
    .leftJoin(taskAssignments, viewerAssignment(viewer))
    .where(where)
    // The viewer's own tasks first, so a candidate's invitations are never pushed off the first page by public tasks.
    .orderBy(sql`${taskAssignments.userId} IS NULL`, desc(taskAssignments.assignedAt), desc(tasks.createdAt), desc(tasks.id))
    .limit(limit)
    .offset(offset)
    .all();
  return rows.map(({ task, membership, assigned, assignedAt, organizationName }) => ({
    task,
    audience: audienceOf(viewer, task, membership, assigned !== null),
    organizationName,
    assignedAt: assigned !== null ? assignedAt : null,
  }));
}

/** Every caller says whether the task is published: a draft (null) is invisible as a task until then. */
export async function insertTask(db: Database, task: NewTask & { publishedAt: string | null }): Promise<TaskRow> {
  return db.insert(tasks).values(task).returning().get();
}

/** What staff may change on a task. */
export type TaskEdit = Partial<
  Pick<
    NewTask,
    "statementTitle" | "statementBody" | "title" | "description" | "tags" | "timeLimitMinutes" | "visibility" | "aiAssistance"
  >
> & { liveSessions?: boolean };

export async function editTask(db: Database, taskId: string, { liveSessions, ...edit }: TaskEdit): Promise<TaskRow | undefined> {
  // The setting lives in the settings JSON beside the import's; set in place, so the import's fields stay as stored.
  const settings =
    liveSessions === undefined
      ? {}
      : { settings: sql`json_set(coalesce(${tasks.settings}, ${JSON.stringify(NO_SETTINGS)}), '$.live_sessions', json(${liveSessions ? "true" : "false"}))` };
  return db
    .update(tasks)
    .set({ ...edit, ...settings, updatedAt: new Date().toISOString() })
    .where(eq(tasks.id, taskId))
    .returning()
    .get();
}

/** Archives a task; archiving it again keeps the first archived_at. */
export async function archiveTask(db: Database, taskId: string): Promise<TaskRow | undefined> {
  const now = new Date().toISOString();
  return db
    .update(tasks)
    .set({ archivedAt: sql`COALESCE(${tasks.archivedAt}, ${now})`, updatedAt: now })
    .where(eq(tasks.id, taskId))
    .returning()
    .get();
}

/**
 * One step of a task's import: the changes, `status` among them, land only while the task is
 * still in `from`, so of two deliveries of the same step only the first does, and a task that
 * has failed meanwhile stays FAILED.
 */
export async function advanceTask(
  db: Database,
  taskId: string,
  from: TaskStatus,
  changes: Partial<Omit<NewTask, "id">> & { status: TaskStatus },
): Promise<TaskRow | undefined> {
  return db
    .update(tasks)
    .set(changes)
    .where(and(eq(tasks.id, taskId), eq(tasks.status, from)))
    .returning()
    .get();
}

const UNFINISHED: TaskStatus[] = ["IMPORTING", "PREPARING", "VALIDATING"];

/** Ends an unfinished task as FAILED, returning it; a finished one is left as it is (at-least-once delivery). */
export async function failTask(db: Database, taskId: string, reason: string): Promise<TaskRow | undefined> {
  return db
    .update(tasks)
    .set({ status: "FAILED", failureReason: reason, updatedAt: new Date().toISOString() })
    .where(and(eq(tasks.id, taskId), inArray(tasks.status, UNFINISHED)))
    .returning()
    .get();
}

/**
 * Stores a task copied from a template unless its creator has copied `limit.copies` templates
 * since `limit.since` (docs/limits.md, "Public templates"). The count is taken inside the
 * statement that writes, so concurrent copies cannot together pass the limit. Undefined when
 * nothing was stored.
 */
export async function insertTemplateTask(
  db: Database,
  task: NewTask & { origin: "template"; publishedAt: string },
  limit: { copies: number; since: string },
): Promise<TaskRow | undefined> {
  const within = sql`(SELECT COUNT(*) FROM tasks c
    WHERE c.created_by = ${task.createdBy} AND c.origin = 'template' AND c.created_at > ${limit.since}) < ${limit.copies}`;
  const [row] = await db
    .insert(tasks)
    .select(sql`SELECT ${rowValues(tasks, task)} WHERE ${within}`)
    .returning();
  return row;
}

/** When the oldest of a user's template copies made after `since` was made, if any. */
export async function oldestTemplateCopySince(db: Database, userId: string, since: string): Promise<string | undefined> {
  const row = await db
    .select({ at: sql<string | null>`MIN(${tasks.createdAt})` })
    .from(tasks)
    .where(and(eq(tasks.createdBy, userId), eq(tasks.origin, "template"), sql`${tasks.createdAt} > ${since}`))
    .get();
  return row?.at ?? undefined;
}
