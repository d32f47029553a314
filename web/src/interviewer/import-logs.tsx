// An import's runner jobs and their logs (GET /tasks/{task_id}/logs, docs/tasks-from-prs.md
// "Reasons and logs"): install steps, each validation run's status and reason, and its log,
// fetched from the presigned URL the API gave and shown as text (or downloaded).
import { useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import { formatDateTime } from "./format";
import { installVersions, noInstallStepsText } from "./install-words";
import { StatusBadge } from "./parts";

type Step = components["schemas"]["TaskLogs"]["steps"][number];

const STEP_NAMES: Record<Step["step"], string> = {
  prepare: "Preparing the environment",
  base: "Tests at the base commit",
  solution: "Tests with the solution",
};

// A log is at most 1 MiB; its end says why a run failed, and a page of text is enough to read.
const SHOWN_LINES = 400;

export function ImportLogs({ taskId }: { taskId: string }) {
  const logs = useLoad(() => call(api.GET("/api/v1/tasks/{task_id}/logs", { params: { path: { task_id: taskId } } })), [taskId]);
  if (logs.error) return <ErrorBox message={logs.error} onRetry={logs.reload} />;
  if (!logs.data) return <Loading what="Loading the import's logs" />;
  if (logs.data.steps.length === 0) return <Empty>The import has no runner jobs yet.</Empty>;
  return (
    <div class="import-logs">
      {logs.data.expires_at && <p class="muted">The log links work until {formatDateTime(logs.data.expires_at)}.</p>}
      {logs.data.steps.map((step) => (
        <StepLog key={step.job_id} step={step} />
      ))}
    </div>
  );
}

function StepLog({ step }: { step: Step }) {
  const noSteps = step.install && noInstallStepsText(step.install);
  return (
    <section class="box step-log" aria-label={STEP_NAMES[step.step]}>
      <h4>
        {STEP_NAMES[step.step]} <StatusBadge status={step.status} />
      </h4>
      {step.reason && <p>{step.reason}</p>}
      {noSteps && <p>{noSteps}</p>}
      {step.install && !noSteps && (
        <table>
          <caption>Install steps ({installVersions(step.install)})</caption>
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Result</th>
              <th scope="col">Took</th>
              <th scope="col">Hint</th>
            </tr>
          </thead>
          <tbody>
            {step.install.steps.map((s, i) => (
              <tr key={i}>
                <td>
                  <code>{s.name}</code>
                </td>
                <td>{s.ok ? "ok" : `failed (exit ${s.exit_code ?? "none"})`}</td>
                <td>{(s.duration_ms / 1000).toFixed(1)} s</td>
                <td>{s.hint ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {step.install?.failure && <p class="bad">{step.install.failure}</p>}
      <div class="row">
        {step.log_url && <LogText url={step.log_url} name={STEP_NAMES[step.step]} />}
        {step.junit_url && (
          <a href={step.junit_url} download>
            Download the JUnit report
          </a>
        )}
      </div>
    </section>
  );
}

function LogText({ url, name }: { url: string; name: string }) {
  const [text, setText] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const show = async () => {
    setBusy(true);
    setError(undefined);
    try {
      // A presigned artifact URL, not the API: the one place the console fetches directly.
      const response = await fetch(url);
      if (!response.ok) throw new Error(response.status === 403 ? "The log's link has expired; reload the page for a new one." : `The log could not be read (${response.status}).`);
      const lines = (await response.text()).split("\n");
      setText((lines.length > SHOWN_LINES ? [`… ${lines.length - SHOWN_LINES} earlier lines not shown (download the log for all of it)`, ...lines.slice(-SHOWN_LINES)] : lines).join("\n"));
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="log">
      <div class="row">
        {text === undefined && (
          <button type="button" class="secondary" disabled={busy} onClick={() => void show()}>
            {busy ? "Loading the log…" : "Show the log"}
          </button>
        )}
        <a href={url} download>
          Download the log
        </a>
      </div>
      {error && <ErrorBox message={error} />}
      {text !== undefined && (
        <pre class="log-text" tabIndex={0} role="region" aria-label={`Log: ${name}`}>
          {text || "(empty)"}
        </pre>
      )}
    </div>
  );
}
