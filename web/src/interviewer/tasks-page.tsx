// The organization's tasks, and a pull request imported as a new one (POST /tasks/import-pr,
// docs/tasks-from-prs.md): the import answers at once and goes on in the background, so the
// form goes to the new task's page, which watches it become READY or FAILED.
import { useEffect, useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import { onNotification } from "../lib/notification-socket";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { formatDateTime } from "./format";
import { NoOrganization, Pager, StatusBadge, StatusFilter, useOrganization } from "./parts";
import { NEW_TASK_OPTIONS, NewTaskOptions } from "./new-task-options";
import { parseTags } from "./task-fields";

type Task = components["schemas"]["Task"];
type TaskStatus = Task["status"];
const STATUSES: TaskStatus[] = ["IMPORTING", "PREPARING", "VALIDATING", "READY", "FAILED"];

export function TasksPage(_props: PageProps) {
  const org = useOrganization();
  return (
    <>
      <h1>Tasks</h1>
      {org ? (
        <>
          <ImportForm org={org} />
          <TaskList org={org} />
        </>
      ) : (
        <NoOrganization />
      )}
    </>
  );
}

function ImportForm({ org }: { org: string }) {
  const [prUrl, setPrUrl] = useState("");
  const [options, setOptions] = useState(NEW_TASK_OPTIONS);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const task = await call(
        api.POST("/api/v1/tasks/import-pr", {
          body: { pr_url: prUrl.trim(), organization_id: org, visibility: options.visibility, tags: parseTags(options.tags), ai_assistance: options.ai },
        }),
      );
      navigate(`/console/tasks/${encodeURIComponent(task.task_id)}`);
    } catch (e) {
      setError(describe(e));
      setBusy(false);
    }
  };

  return (
    <section class="box" aria-labelledby="import-heading">
      <h2 id="import-heading">Import a pull request</h2>
      <p class="muted">
        The pull request's tests become the hidden tests and its change the solution. Importing takes a few minutes; you can leave the task's page
        meanwhile, a notification says when it is done.
      </p>
      <form onSubmit={(e) => void submit(e)}>
        <label for="import-pr-url">Pull request URL</label>
        <input
          id="import-pr-url"
          class="wide"
          type="url"
          required
          placeholder="https://github.com/owner/repo/pull/123"
          value={prUrl}
          onInput={(e) => setPrUrl(e.currentTarget.value)}
        />
        <NewTaskOptions id="import" value={options} onChange={setOptions} publicWhen="once ready" />
        {error && <ErrorBox message={error} />}
        <button type="submit" disabled={busy}>
          {busy ? "Importing…" : "Import"}
        </button>
      </form>
    </section>
  );
}

function TaskList({ org }: { org: string }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<TaskStatus | "">("");
  const [archived, setArchived] = useState(false);
  const tasks = useLoad(
    () =>
      call(
        api.GET("/api/v1/tasks", {
          params: { query: { organization_id: org, page, limit: 20, archived, ...(status ? { status } : {}) } },
        }),
      ),
    [org, page, status, archived],
  );
  // An import finishing changes a row's status; the list follows without polling.
  useEffect(() => onNotification((n) => n.type === "task.import_finished" && tasks.reload()), []);

  return (
    <section aria-labelledby="tasks-heading">
      <h2 id="tasks-heading">The organization's tasks</h2>
      <div class="row filters">
        <StatusFilter
          id="tasks-status"
          statuses={STATUSES}
          value={status}
          onChange={(next) => {
            setStatus(next);
            setPage(1);
          }}
        />
        <div class="check">
          <input
            id="tasks-archived"
            type="checkbox"
            checked={archived}
            onChange={(e) => {
              setArchived(e.currentTarget.checked);
              setPage(1);
            }}
          />
          <label for="tasks-archived">Archived tasks</label>
        </div>
      </div>
      {tasks.error ? (
        <ErrorBox message={tasks.error} onRetry={tasks.reload} />
      ) : !tasks.data ? (
        <Loading what="Loading tasks" />
      ) : tasks.data.items.length === 0 ? (
        <Empty>{status || archived ? "No tasks match." : "No tasks yet: import a pull request above, or use a template."}</Empty>
      ) : (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Status</th>
                <th scope="col">Language</th>
                <th scope="col">Tags</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {tasks.data.items.map((t) => (
                <tr key={t.task_id}>
                  <td>
                    <a href={`/console/tasks/${encodeURIComponent(t.task_id)}`}>{t.title || t.statement?.title || t.task_id}</a>
                    {t.statement && t.statement.title !== t.title && <div class="muted">Candidates read: {t.statement.title}</div>}
                  </td>
                  <td>
                    <StatusBadge status={t.status} />
                  </td>
                  <td>{[t.language, t.test_framework].filter(Boolean).join(", ") || "—"}</td>
                  <td>{t.tags.join(", ") || "—"}</td>
                  <td>{formatDateTime(t.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager pagination={tasks.data.pagination} onPage={setPage} label="Tasks" />
        </>
      )}
    </section>
  );
}
