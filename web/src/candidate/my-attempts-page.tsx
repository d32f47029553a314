// /attempts: the tasks the caller was invited to, their attempts, and the public tasks anyone may
// try, each with its organization (task-list.ts orders them). Two API calls: attempts and tasks.
import type { components } from "../../../client/src/index";
import { useState } from "preact/hooks";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import { me } from "../lib/me";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { attemptFor } from "./start-attempt";
import { candidateTaskLists, organizationOf, taskTitle } from "./task-list";

type Attempt = components["schemas"]["Attempt"];
type Task = components["schemas"]["Task"];

const STATUS_WORDS: Record<Attempt["status"], string> = {
  NOT_STARTED: "Not started",
  IN_PROGRESS: "In progress",
  SUBMITTED: "Submitted",
  SCORED: "Scored",
};

// The attempt's page opens on the score once there is one.
const OPEN_WORDS: Record<Attempt["status"], string> = {
  NOT_STARTED: "Open",
  IN_PROGRESS: "Continue",
  SUBMITTED: "View",
  SCORED: "See your score",
};

function date(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "";
}

export function MyAttemptsPage(_props: PageProps) {
  const loaded = useLoad(async () => {
    const [attempts, tasks] = await Promise.all([
      call(api.GET("/api/v1/attempts", { params: { query: { limit: 100 } } })),
      call(api.GET("/api/v1/tasks", { params: { query: { limit: 100 } } })),
    ]);
    // Staff also see their organization's attempts in the list; this page is about one's own.
    const user = me.value;
    return { attempts: user ? attempts.items.filter((a) => a.candidate_id === user.id) : attempts.items, tasks: tasks.items };
  }, []);

  return (
    <>
      <h1>Your assessments</h1>
      {loaded.error && <ErrorBox message={loaded.error} onRetry={loaded.reload} />}
      {!loaded.data && !loaded.error && <Loading what="Loading your assessments" />}
      {loaded.data && <Lists attempts={loaded.data.attempts} tasks={loaded.data.tasks} />}
    </>
  );
}

function Lists({ attempts, tasks }: { attempts: Attempt[]; tasks: Task[] }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string>();
  const byId = new Map(tasks.map((t) => [t.task_id, t]));
  const { invitations, publicTasks } = candidateTaskLists(tasks, attempts);

  async function start(taskId: string) {
    setBusy(taskId);
    setError(undefined);
    try {
      navigate(`/attempts/${await attemptFor(taskId)}`);
    } catch (e) {
      setError(describe(e));
      setBusy(null);
    }
  }

  if (attempts.length === 0 && invitations.length === 0 && publicTasks.length === 0) {
    return (
      <Empty>
        You have no assessments yet. When an interviewer invites you, the invitation e-mail has a link that adds the task here.
      </Empty>
    );
  }

  return (
    <>
      {error && <ErrorBox message={error} />}
      {invitations.length > 0 && (
        <section aria-labelledby="invitations-title">
          <h2 id="invitations-title">Your invitations</h2>
          <p class="muted">Tasks an organization invited you to, newest first.</p>
          <TaskCards tasks={invitations} busy={busy} onOpen={(id) => void start(id)} />
        </section>
      )}
      <section aria-labelledby="attempts-title">
        <h2 id="attempts-title">Your attempts</h2>
        {attempts.length === 0 ? (
          <p class="muted">None yet: open a task {invitations.length > 0 ? "above" : "below"} to start.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Organization</th>
                <th scope="col">Status</th>
                <th scope="col">When</th>
                <th scope="col">
                  <span class="visually-hidden">Open</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {attempts.map((a) => (
                <tr key={a.id}>
                  <td>{taskTitle(byId.get(a.task_id), a.task_id)}</td>
                  <td>{organizationOf(byId.get(a.task_id)) ?? a.organization_id}</td>
                  <td>{STATUS_WORDS[a.status]}</td>
                  <td>
                    {a.status === "NOT_STARTED" && `Created ${date(a.created_at)}`}
                    {a.status === "IN_PROGRESS" && (a.deadline_at ? `Due ${date(a.deadline_at)}` : `Started ${date(a.started_at)}`)}
                    {(a.status === "SUBMITTED" || a.status === "SCORED") && `Submitted ${date(a.submitted_at)}${a.auto_submitted ? " (time was up)" : ""}`}
                  </td>
                  <td>
                    <a href={`/attempts/${a.id}`} aria-label={`${OPEN_WORDS[a.status]}: ${taskTitle(byId.get(a.task_id), a.task_id)}`}>
                      {OPEN_WORDS[a.status]}
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {publicTasks.length > 0 && (
        <section aria-labelledby="public-title">
          <h2 id="public-title">Public tasks</h2>
          <p class="muted">Practice tasks that organizations publish for anyone signed in. They are not invitations: no one asked you to take them.</p>
          <TaskCards tasks={publicTasks} busy={busy} onOpen={(id) => void start(id)} />
        </section>
      )}
    </>
  );
}

/** Tasks to open, each with its organization and how it runs. */
function TaskCards({ tasks, busy, onOpen }: { tasks: Task[]; busy: string | null; onOpen: (taskId: string) => void }) {
  return (
    <>
      <ul class="task-list">
        {tasks.map((t) => {
          const title = taskTitle(t, t.task_id);
          const organization = organizationOf(t);
          return (
            <li key={t.task_id} class="panel">
              <h3>{title}</h3>
              <p>From {organization}</p>
              <p class="muted">
                {[t.language, t.time_limit_minutes ? `${t.time_limit_minutes} minutes` : "no time limit", t.ai_assistance ? "AI assistant allowed" : null].filter(Boolean).join(" · ")}
              </p>
              <button type="button" onClick={() => onOpen(t.task_id)} disabled={busy !== null} aria-label={`Open the task: ${title}, from ${organization}`}>
                {busy === t.task_id ? "Opening…" : "Open the task"}
              </button>
            </li>
          );
        })}
      </ul>
      <p class="muted small">Opening a task does not start its clock: you press Start on the task's page.</p>
    </>
  );
}
