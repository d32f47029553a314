import { describe, expect, it } from "vitest";
import type { components } from "../../../client/src/index";
import { candidateTaskLists, organizationOf, taskTitle } from "../../../web/src/candidate/task-list";

type Task = components["schemas"]["Task"];
type Attempt = components["schemas"]["Attempt"];

function task(id: string, fields: Partial<Task> = {}): Task {
  return {
    task_id: id,
    organization_id: `org-${id}`,
    organization_name: `Org ${id}`,
    assigned_at: null,
    visibility: "PRIVATE_ORG",
    tags: [],
    statement: { title: `Title ${id}`, body: "" },
    status: "READY",
    language: "javascript",
    test_framework: null,
    test_command: null,
    time_limit_minutes: 90,
    ai_assistance: false,
    live_sessions: false,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    ready_at: null,
    archived_at: null,
    ...fields,
  };
}

const attemptOn = (taskId: string) => ({ id: `att_${taskId}`, task_id: taskId }) as Attempt;
const ids = (tasks: Task[]) => tasks.map((t) => t.task_id);

describe("the candidate's task list", () => {
  it("puts the tasks they were invited to first, newest invitation first, and public tasks apart", () => {
    const tasks = [
      task("pub-new", { visibility: "PUBLIC", organization_name: "Zeta Labs", statement: { title: "Add maxLength to slugify", body: "" } }),
      task("inv-old", { assigned_at: "2026-01-01T10:00:00.000Z", statement: { title: "Add maxLength to slugify", body: "" } }),
      task("inv-new", { assigned_at: "2026-01-03T10:00:00.000Z" }),
      task("pub-a", { visibility: "PUBLIC", organization_name: "Acme" }),
      // Public and assigned to them: an invitation, listed once.
      task("inv-pub", { visibility: "PUBLIC", assigned_at: "2026-01-02T10:00:00.000Z" }),
    ];
    const lists = candidateTaskLists(tasks, []);
    expect(ids(lists.invitations)).toEqual(["inv-new", "inv-pub", "inv-old"]);
    // By organization, then title: the same title under another organization is told apart by its name.
    expect(ids(lists.publicTasks)).toEqual(["pub-a", "pub-new"]);
    expect(lists.publicTasks.map(organizationOf)).toEqual(["Acme", "Zeta Labs"]);
  });

  it("leaves out what they already attempted, what is not ready or archived, and their organization's other private tasks", () => {
    const tasks = [
      task("inv-done", { assigned_at: "2026-01-01T10:00:00.000Z" }),
      task("inv-importing", { assigned_at: "2026-01-01T10:00:00.000Z", status: "IMPORTING" }),
      task("pub-archived", { visibility: "PUBLIC", archived_at: "2026-01-02T00:00:00.000Z" }),
      task("pub-done", { visibility: "PUBLIC" }),
      task("private"),
      task("inv", { assigned_at: "2026-01-01T10:00:00.000Z" }),
    ];
    const lists = candidateTaskLists(tasks, [attemptOn("inv-done"), attemptOn("pub-done")]);
    expect(ids(lists.invitations)).toEqual(["inv"]);
    expect(lists.publicTasks).toEqual([]);
  });

  it("names the organization by its name, else its id; the task by its statement, else the staff's title, else its id", () => {
    expect(organizationOf(task("a", { organization_name: undefined }))).toBe("org-a");
    expect(organizationOf(undefined)).toBeNull();
    expect(taskTitle(task("a"), "a")).toBe("Title a");
    expect(taskTitle(task("a", { statement: null, title: "Staff's" }), "a")).toBe("Staff's");
    expect(taskTitle(undefined, "tsk_1")).toBe("Task tsk_1");
  });
});
