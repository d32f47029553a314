// What the candidate's task list shows, and in which order: the tasks they were invited to
// first, then the public tasks any signed-in user may try, each with its organization. A task
// they have an attempt on is under their attempts instead.
import type { components } from "../../../client/src/index";

type Attempt = components["schemas"]["Attempt"];
type Task = components["schemas"]["Task"];

export interface TaskLists {
  /** Tasks assigned to the candidate (an invitation they accepted) and not attempted yet: newest invitation first. */
  invitations: Task[];
  /** Public tasks they were not invited to and have not attempted: by organization, then title. */
  publicTasks: Task[];
}

/** The task's organization as a person reads it: its name, else its id. */
export function organizationOf(task: Task | undefined): string | null {
  return task ? (task.organization_name ?? task.organization_id) : null;
}

/** The title candidates read: the statement's, else the staff's, else the id. */
export function taskTitle(task: Task | undefined, id: string): string {
  return task?.statement?.title ?? task?.title ?? `Task ${id}`;
}

function open(task: Task): boolean {
  return task.status === "READY" && !task.archived_at;
}

export function candidateTaskLists(tasks: Task[], attempts: Attempt[]): TaskLists {
  const attempted = new Set(attempts.map((a) => a.task_id));
  const startable = tasks.filter((t) => open(t) && !attempted.has(t.task_id));
  const invitations = startable.filter((t) => t.assigned_at).sort((a, b) => b.assigned_at!.localeCompare(a.assigned_at!));
  const publicTasks = startable
    .filter((t) => !t.assigned_at && t.visibility === "PUBLIC")
    .sort((a, b) => organizationOf(a)!.localeCompare(organizationOf(b)!) || taskTitle(a, a.task_id).localeCompare(taskTitle(b, b.task_id)));
  return { invitations, publicTasks };
}
