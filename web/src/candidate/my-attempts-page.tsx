// /attempts: the caller's attempts and the tasks they may start, with a link to each.
import type { components } from "../../../client/src/index";
import { useState } from "preact/hooks";
import { api, call } from "../api";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import { me } from "../lib/me";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { useLoad } from "../lib/use-load";
import { attemptFor } from "./start-attempt";

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

function taskTitle(task: Task | undefined, id: string): string {
  return task?.statement?.title ?? task?.title ?? `Task ${id}`;
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
  const attempted = new Set(attempts.map((a) => a.task_id));
  const open = tasks.filter((t) => t.status === "READY" && !t.archived_at && !attempted.has(t.task_id));

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

  if (attempts.length === 0 && open.length === 0) {
    return (
      <Empty>
        You have no assessments yet. When an interviewer invites you, the invitation e-mail has a link that adds the task here.
      </Empty>
    );
  }

  return (
    <>
      {error && <ErrorBox message={error} />}
      <section aria-labelledby="attempts-title">
        <h2 id="attempts-title">Your attempts</h2>
        {attempts.length === 0 ? (
          <p class="muted">None yet: open a task below to start.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Task</th>
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
      {open.length > 0 && (
        <section aria-labelledby="tasks-title">
          <h2 id="tasks-title">Tasks to start</h2>
          <ul class="task-list">
            {open.map((t) => (
              <li key={t.task_id} class="panel">
                <h3>{taskTitle(t, t.task_id)}</h3>
                <p class="muted">
                  {[t.language, t.time_limit_minutes ? `${t.time_limit_minutes} minutes` : "no time limit", t.ai_assistance ? "AI assistant allowed" : null].filter(Boolean).join(" · ")}
                </p>
                <button type="button" onClick={() => void start(t.task_id)} disabled={busy !== null} aria-label={`Open the task: ${taskTitle(t, t.task_id)}`}>
                  {busy === t.task_id ? "Opening…" : "Open the task"}
                </button>
              </li>
            ))}
          </ul>
          <p class="muted small">Opening a task does not start its clock: you press Start on the task's page.</p>
        </section>
      )}
    </>
  );
}
