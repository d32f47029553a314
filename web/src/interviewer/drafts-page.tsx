// Task builder drafts (docs/task-builder.md): a draft from an issue and the pull request that
// solves it, validated in the background; the list of the organization's drafts.
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
import { parseTags, parseTimeLimit } from "./task-fields";

type DraftStatus = components["schemas"]["TaskDraft"]["status"];
const STATUSES: DraftStatus[] = ["IMPORTING", "PREPARING", "VALIDATING", "VALIDATED", "FAILED", "PUBLISHED"];

export function DraftsPage(_props: PageProps) {
  const org = useOrganization();
  return (
    <>
      <h1>Task drafts</h1>
      {org ? (
        <>
          <p class="muted">
            A draft is made from an issue and the pull request that solves it: candidates read the issue, the pull request's tests become the hidden tests.
            It is validated like an import, and published as a task once you have checked it.
          </p>
          <DraftForm org={org} />
          <DraftList org={org} />
        </>
      ) : (
        <NoOrganization />
      )}
    </>
  );
}

function DraftForm({ org }: { org: string }) {
  const [issueUrl, setIssueUrl] = useState("");
  const [prUrl, setPrUrl] = useState("");
  const [options, setOptions] = useState(NEW_TASK_OPTIONS);
  const [timeLimit, setTimeLimit] = useState("90");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    const limit = parseTimeLimit(timeLimit);
    if (limit === undefined) return setError("The time limit is a whole number of minutes, or empty for no limit.");
    setBusy(true);
    setError(undefined);
    try {
      const draft = await call(
        api.POST("/api/v1/task-drafts", {
          body: {
            issue_url: issueUrl.trim(),
            pr_url: prUrl.trim(),
            organization_id: org,
            tags: parseTags(options.tags),
            time_limit_minutes: limit,
            visibility: options.visibility,
            ai_assistance: options.ai,
          },
        }),
      );
      navigate(`/console/drafts/${encodeURIComponent(draft.draft_id)}`);
    } catch (e) {
      setError(describe(e));
      setBusy(false);
    }
  };

  return (
    <section class="box" aria-labelledby="new-draft-heading">
      <h2 id="new-draft-heading">New draft</h2>
      <form onSubmit={(e) => void submit(e)}>
        <label for="draft-issue">Issue URL</label>
        <input
          id="draft-issue"
          class="wide"
          type="url"
          required
          placeholder="https://github.com/owner/repo/issues/12"
          value={issueUrl}
          onInput={(e) => setIssueUrl(e.currentTarget.value)}
        />
        <label for="draft-pr">Pull request URL (the change that solves the issue)</label>
        <input
          id="draft-pr"
          class="wide"
          type="url"
          required
          placeholder="https://github.com/owner/repo/pull/34"
          value={prUrl}
          onInput={(e) => setPrUrl(e.currentTarget.value)}
        />
        <NewTaskOptions id="draft" value={options} onChange={setOptions} publicWhen="once published">
          <div>
            <label for="draft-limit">Time limit (minutes, empty for none)</label>
            <input id="draft-limit" type="number" min={5} max={1440} step={1} value={timeLimit} onInput={(e) => setTimeLimit(e.currentTarget.value)} />
          </div>
        </NewTaskOptions>
        {error && <ErrorBox message={error} />}
        <button type="submit" disabled={busy}>
          {busy ? "Creating…" : "Create the draft"}
        </button>
      </form>
    </section>
  );
}

function DraftList({ org }: { org: string }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<DraftStatus | "">("");
  const drafts = useLoad(
    () => call(api.GET("/api/v1/task-drafts", { params: { query: { organization_id: org, page, limit: 20, ...(status ? { status } : {}) } } })),
    [org, page, status],
  );
  useEffect(() => onNotification((n) => n.type === "task_draft.validation_finished" && drafts.reload()), []);

  return (
    <section aria-labelledby="drafts-heading">
      <h2 id="drafts-heading">Drafts</h2>
      <div class="row filters">
        <StatusFilter
          id="drafts-status"
          statuses={STATUSES}
          value={status}
          onChange={(next) => {
            setStatus(next);
            setPage(1);
          }}
        />
      </div>
      {drafts.error ? (
        <ErrorBox message={drafts.error} onRetry={drafts.reload} />
      ) : !drafts.data ? (
        <Loading what="Loading drafts" />
      ) : drafts.data.items.length === 0 ? (
        <Empty>{status ? "No drafts match." : "No drafts yet."}</Empty>
      ) : (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Draft</th>
                <th scope="col">Status</th>
                <th scope="col">Issue and pull request</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {drafts.data.items.map((d) => (
                <tr key={d.draft_id}>
                  <td>
                    <a href={`/console/drafts/${encodeURIComponent(d.draft_id)}`}>{d.title || d.draft_id}</a>
                  </td>
                  <td>
                    <StatusBadge status={d.status} />
                  </td>
                  <td>
                    issue #{d.issue.number}, pull request #{d.pull_request.number}
                  </td>
                  <td>{formatDateTime(d.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager pagination={drafts.data.pagination} onPage={setPage} label="Drafts" />
        </>
      )}
    </section>
  );
}
