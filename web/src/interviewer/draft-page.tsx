// One task builder draft (docs/task-builder.md): its validation, watched until it ends (the
// task_draft.validation_finished notification, polling with backoff as the fallback), what it
// found, the fields to edit, validating again, and publishing a VALIDATED draft as a task.
import { useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call } from "../lib/data";
import { ErrorBox, LoadError, Loading } from "../components/states";
import { describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { formatDateTime, plural } from "./format";
import { StatusBadge, TestIds } from "./parts";
import type { TaskFieldsPatch } from "./task-fields";
import { TaskFieldsForm } from "./task-fields-form";
import { useWatched } from "./use-watched";

type Draft = components["schemas"]["TaskDraft"];

const UNDER_WAY = new Set<Draft["status"]>(["IMPORTING", "PREPARING", "VALIDATING"]);

export function DraftPage({ params }: PageProps) {
  const draftId = params.draftId ?? "";
  const draft = useWatched(
    () => call(api.GET("/api/v1/task-drafts/{draft_id}", { params: { path: { draft_id: draftId } } })),
    [draftId],
    (d) => (UNDER_WAY.has(d.status) ? "poll" : "done"),
    (n) => n.type === "task_draft.validation_finished" && n.payload.draft_id === draftId,
  );

  if (draft.error || !draft.data) {
    return (
      <>
        <h1>Task draft</h1>
        {draft.error ? (
          <LoadError error={draft.error} status={draft.status} what="This draft" back={{ href: "/console/drafts", label: "Back to the drafts" }} onRetry={draft.reload} />
        ) : (
          <Loading what="Loading the draft" />
        )}
      </>
    );
  }
  const d = draft.data;
  const save = async (body: TaskFieldsPatch) => {
    const saved = await call(api.PATCH("/api/v1/task-drafts/{draft_id}", { params: { path: { draft_id: draftId } }, body }));
    draft.replace(saved);
    return saved;
  };

  return (
    <>
      <p class="crumbs">
        <a href="/console/drafts">Drafts</a>
      </p>
      <h1>
        {d.title || d.draft_id} <StatusBadge status={d.status} />
      </h1>
      {draft.staleError && <p class="muted">Could not check the draft again: {draft.staleError} Trying again shortly.</p>}
      <dl class="facts">
        <dt>Issue</dt>
        <dd>
          <a href={d.issue.url} rel="noreferrer" target="_blank">
            #{d.issue.number}
            {d.issue.title ? `: ${d.issue.title}` : ""}
          </a>
        </dd>
        <dt>Pull request</dt>
        <dd>
          <a href={d.pull_request.url} rel="noreferrer" target="_blank">
            #{d.pull_request.number}
            {d.pull_request.title ? `: ${d.pull_request.title}` : ""}
          </a>
          {d.pull_request.head_commit && <span class="muted"> at {d.pull_request.head_commit.slice(0, 12)}</span>}
        </dd>
        <dt>Created</dt>
        <dd>{formatDateTime(d.created_at)}</dd>
      </dl>
      <Validation draft={d} onChanged={draft.replace} />
      <section aria-labelledby="draft-edit-heading">
        <h2 id="draft-edit-heading">Statement and settings</h2>
        {d.status === "PUBLISHED" ? (
          <p>
            Published drafts are edited on their task's page.
          </p>
        ) : (
          <TaskFieldsForm id="draft" source={d} onSave={save} />
        )}
      </section>
    </>
  );
}

function Validation({ draft, onChanged }: { draft: Draft; onChanged: (draft: Draft) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const v = draft.validation;
  const path = { params: { path: { draft_id: draft.draft_id } } };

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  const validate = () => run(async () => onChanged(await call(api.POST("/api/v1/task-drafts/{draft_id}/validate", path))));
  const publish = () =>
    run(async () => {
      const task = await call(api.POST("/api/v1/tasks", { body: { draft_id: draft.draft_id } }));
      navigate(`/console/tasks/${encodeURIComponent(task.task_id)}`);
    });

  return (
    <section class="box" aria-labelledby="validation-heading">
      <h2 id="validation-heading">Validation</h2>
      {UNDER_WAY.has(draft.status) && (
        <p role="status">
          Validating: the pull request's tests run at the base commit and with the solution. This page changes when it is done; it usually takes a few
          minutes.
        </p>
      )}
      {draft.status === "FAILED" && (
        <div class="failure">
          <h3>Validation failed</h3>
          <p>{draft.failure_reason ?? "No reason was given."}</p>
          <p class="muted">Fix the pull request (or the issue), then validate again.</p>
        </div>
      )}
      {draft.status === "PUBLISHED" && draft.task_id && (
        <p>
          Published {formatDateTime(draft.published_at)} as <a href={`/console/tasks/${encodeURIComponent(draft.task_id)}`}>its task</a>.
        </p>
      )}
      {v.validated_at && (
        <>
          <p>
            Validated {formatDateTime(v.validated_at)}: {[v.language, v.test_framework, v.test_command?.join(" ")].filter(Boolean).join(" · ")}.{" "}
            {plural(v.fail_to_pass?.length ?? 0, "test")} the solution makes pass, {plural(v.pass_to_pass?.length ?? 0, "test")} that must keep passing
            {v.test_files?.length ? `, in ${v.test_files.join(", ")}` : ""}.
          </p>
          <details>
            <summary>The tests by name</summary>
            <h3>Fail to pass</h3>
            <TestIds ids={v.fail_to_pass ?? []} />
            <h3>Pass to pass</h3>
            <TestIds ids={v.pass_to_pass ?? []} />
          </details>
        </>
      )}
      {error && <ErrorBox message={error} />}
      <div class="row">
        {draft.status === "VALIDATED" && (
          <button type="button" disabled={busy} onClick={() => void publish()}>
            Publish as a task
          </button>
        )}
        {(draft.status === "VALIDATED" || draft.status === "FAILED") && (
          <button type="button" class="secondary" disabled={busy} onClick={() => void validate()}>
            Validate again
          </button>
        )}
      </div>
    </section>
  );
}
