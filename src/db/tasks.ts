import { and, eq } from "drizzle-orm";
import { taskAudience, type TaskAudience } from "../domain/tasks";
import type { Caller } from "../http/auth";
import { HttpError } from "../http/errors";
import type { Database } from "./client";
import { memberships, taskAssignments, tasks } from "./schema";

export type TaskRow = typeof tasks.$inferSelect;

/**
 * The one visibility check on a task: the task and how the caller sees it ("staff" sees
 * everything, "candidate" the candidate view), or a 404 when the caller may not see it at
 * all, so a task's existence does not leak.
 */
export async function findVisibleTask(
  db: Database,
  caller: Caller,
  taskId: string,
): Promise<{ task: TaskRow; audience: Exclude<TaskAudience, "none"> }> {
  const row = await db
    .select({ task: tasks, membership: memberships.source, assignedAt: taskAssignments.assignedAt })
    .from(tasks)
    .leftJoin(memberships, and(eq(memberships.organizationId, tasks.organizationId), eq(memberships.userId, caller.user.id)))
    .leftJoin(taskAssignments, and(eq(taskAssignments.taskId, tasks.id), eq(taskAssignments.userId, caller.user.id)))
    .where(eq(tasks.id, taskId))
    .get();
  const audience = row
    ? taskAudience({
        visibility: row.task.visibility,
        status: row.task.status,
        archived: row.task.archivedAt !== null,
        orgRole: caller.roleIn(row.task.organizationId, row.membership),
        platformAdmin: caller.isPlatformAdmin,
        assignedToCaller: row.assignedAt !== null,
      })
    : "none";
  if (!row || audience === "none") throw HttpError.notFound(`Task ${taskId} not found`);
  return { task: row.task, audience };
}

export async function findTask(db: Database, taskId: string): Promise<TaskRow | undefined> {
  return db.select().from(tasks).where(eq(tasks.id, taskId)).get();
}
