// One task for its staff: while it is imported, its progress, watched until READY or FAILED
// (the task.import_finished notification, polling with backoff as the fallback); a failure's
// reason and logs; the statement and settings to edit; its candidates and their attempts. Two
// requests: the task, and (once READY) its candidates with their attempts' status and score.
import { useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call } from "../lib/data";
import { LoadError, Loading } from "../components/states";
import type { PageProps } from "../lib/page";
import { formatDateTime } from "./format";
import { ImportLogs } from "./import-logs";
import { StatusBadge, TestIds } from "./parts";
import { TaskCandidates } from "./task-candidates";
import type { TaskFieldsPatch } from "./task-fields";
import { TaskFieldsForm } from "./task-fields-form";
import { useWatched } from "./use-watched";

type Task = components["schemas"]["Task"];

const UNDER_WAY = new Set<Task["status"]>(["IMPORTING", "PREPARING", "VALIDATING"]);

export function TaskPage({ params }: PageProps) {
  const taskId = params.taskId ?? "";
  const task = useWatched(
    () => call(api.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: taskId } } })),
    [taskId],
    (t) => (UNDER_WAY.has(t.status) ? "poll" : "done"),
    (n) => n.type === "task.import_finished" && n.payload.task_id === taskId,
  );

  if (task.error) {
    return (
      <>
        <h1>Task</h1>
        <LoadError error={task.error} status={task.status} what="This task" back={{ href: "/console/tasks", label: "Back to the tasks" }} onRetry={task.reload} />
      </>
    );
  }
  if (!task.data) {
    return (
      <>
        <h1>Task</h1>
        <Loading what="Loading the task" />
      </>
    );
  }
  const t = task.data;
  const save = async (body: TaskFieldsPatch) => {
    const saved = await call(api.PATCH("/api/v1/tasks/{task_id}", { params: { path: { task_id: taskId } }, body }));
    task.replace(saved);
    return saved;
  };

  return (
    <>
      <p class="crumbs">
        <a href="/console/tasks">Tasks</a>
      </p>
      <h1>
        {t.title || t.statement?.title || t.task_id} <StatusBadge status={t.status} />
      </h1>
      <TaskFacts task={t} />
      {task.staleError && <p class="muted">Could not check the task again: {task.staleError} Trying again shortly.</p>}
      {UNDER_WAY.has(t.status) && <ImportProgress task={t} />}
      {t.status === "FAILED" && <ImportFailure task={t} />}
      {t.status === "READY" && <HiddenTests task={t} />}
      <section aria-labelledby="edit-heading">
        <h2 id="edit-heading">Statement and settings</h2>
        <TaskFieldsForm id="task" source={t} onSave={save} />
      </section>
      {t.status === "READY" ? (
        <TaskCandidates task={t} />
      ) : (
        <section aria-labelledby="candidates-heading">
          <h2 id="candidates-heading">Candidates</h2>
          <p class="muted">Candidates can be invited once the task is READY.</p>
        </section>
      )}
    </>
  );
}

function TaskFacts({ task }: { task: Task }) {
  const source = task.source;
  return (
    <dl class="facts">
      {source?.template ? (
        <>
          <dt>From the template</dt>
          <dd>
            <a href="/console/templates">{source.template}</a>
          </dd>
        </>
      ) : (
        source && (
          <>
            <dt>Pull request</dt>
            <dd>
              <a href={source.pr_url} rel="noreferrer" target="_blank">
                {source.owner}/{source.repo}#{source.pr_number}
                {source.title ? `: ${source.title}` : ""}
              </a>
            </dd>
          </>
        )
      )}
      {source?.issue && (
        <>
          <dt>Issue</dt>
          <dd>
            <a href={source.issue.url} rel="noreferrer" target="_blank">
              #{source.issue.number}
              {source.issue.title ? `: ${source.issue.title}` : ""}
            </a>
          </dd>
        </>
      )}
      <dt>Language and tests</dt>
      <dd>{[task.language, task.test_framework, task.test_command?.join(" ")].filter(Boolean).join(" · ") || "not known yet"}</dd>
      <dt>Time limit</dt>
      <dd>{task.time_limit_minutes === null ? "none" : `${task.time_limit_minutes} minutes`}</dd>
      <dt>Visibility</dt>
      <dd>{task.visibility === "PUBLIC" ? "public" : "private to the organization"}</dd>
      <dt>AI assistant</dt>
      <dd>{task.ai_assistance ? "allowed" : "not allowed"}</dd>
      <dt>Created</dt>
      <dd>{formatDateTime(task.created_at)}</dd>
      {task.ready_at && (
        <>
          <dt>Ready</dt>
          <dd>{formatDateTime(task.ready_at)}</dd>
        </>
      )}
      {task.archived_at && (
        <>
          <dt>Archived</dt>
          <dd>{formatDateTime(task.archived_at)}</dd>
        </>
      )}
    </dl>
  );
}

const STEPS: { status: Task["status"]; label: string }[] = [
  { status: "IMPORTING", label: "Reading the pull request and storing its base" },
  { status: "PREPARING", label: "Installing dependencies and finding the test framework" },
  { status: "VALIDATING", label: "Running the tests at the base and with the solution" },
  { status: "READY", label: "Ready for candidates" },
];

function ImportProgress({ task }: { task: Task }) {
  const at = STEPS.findIndex((s) => s.status === task.status);
  const since: Partial<Record<Task["status"], string | null | undefined>> = {
    IMPORTING: task.created_at,
    PREPARING: task.phases?.preparing_at,
    VALIDATING: task.phases?.validating_at,
  };
  return (
    <section class="box" aria-labelledby="progress-heading">
      <h2 id="progress-heading">Import in progress</h2>
      <ol class="steps">
        {STEPS.map((s, i) => (
          <li key={s.status} class={i < at ? "done" : i === at ? "current" : ""} aria-current={i === at ? "step" : undefined}>
            {s.label}
            {i < at && <span class="visually-hidden"> (done)</span>}
            {i === at && since[s.status] && <span class="muted"> (since {formatDateTime(since[s.status])})</span>}
          </li>
        ))}
      </ol>
      <p role="status" class="muted">
        This page follows the import and changes when it is done; importing usually takes a few minutes.
      </p>
    </section>
  );
}

function ImportFailure({ task }: { task: Task }) {
  return (
    <section class="box failure" aria-labelledby="failure-heading">
      <h2 id="failure-heading">The import failed</h2>
      <p>{task.failure_reason ?? "The import gave no reason."}</p>
      {task.install_failure && <p>{task.install_failure}</p>}
      <h3>Logs</h3>
      <ImportLogs taskId={task.task_id} />
    </section>
  );
}

function HiddenTests({ task }: { task: Task }) {
  const [logs, setLogs] = useState(false);
  const f2p = task.fail_to_pass ?? [];
  const p2p = task.pass_to_pass ?? [];
  return (
    <section aria-labelledby="tests-heading">
      <h2 id="tests-heading">Hidden tests</h2>
      <p>
        {f2p.length} tests the solution makes pass and {p2p.length} that must keep passing
        {task.test_files?.length ? `, in ${task.test_files.join(", ")}` : ""}.
      </p>
      {task.install_failure && <p class="bad">{task.install_failure}</p>}
      <details>
        <summary>The tests by name</summary>
        <h3>Fail to pass</h3>
        <TestIds ids={f2p} />
        <h3>Pass to pass</h3>
        <TestIds ids={p2p} />
      </details>
      {logs ? (
        <>
          <h3>Logs</h3>
          <ImportLogs taskId={task.task_id} />
        </>
      ) : (
        <button type="button" class="secondary" onClick={() => setLogs(true)}>
          Show the import's logs
        </button>
      )}
    </section>
  );
}
