// Test runs of the attempt (docs/api.md, "Runs"): Run tests (after saving), the run while it is
// queued and running, its per-test results and artifacts once `run.finished` arrives (polling
// with backoff in case the notification does not), and the runs before it.
import type { components } from "../../../client/src/index";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call } from "../lib/data";
import { ErrorBox, Loading } from "../components/states";
import { backoffMs } from "../lib/backoff";
import { describe } from "../lib/errors";
import { onNotification, socketState } from "../lib/notification-socket";
import { testCountsText } from "../lib/run-words";

type Run = components["schemas"]["Run"];
type RunDetail = components["schemas"]["RunDetail"];

interface Props {
  attemptId: string;
  canRun: boolean;
  /** Saves what is unsaved and answers the overlay's paths; throws with the reason when it cannot. */
  prepare: () => Promise<string[]>;
  onStarted?: (runId: string) => void;
}

const FINISHED = new Set(["SUCCEEDED", "FAILED", "TIMED_OUT", "ERROR"]);

function statusWords(run: Run): string {
  switch (run.status) {
    case "queued":
      return "Queued: waiting for the sandbox…";
    case "RUNNING":
      return "Running the tests…";
    case "SUCCEEDED":
      return run.counts ? testCountsText(run.counts) : "Finished";
    case "FAILED":
      return `No test report: ${run.reason ?? "the test command failed"}`;
    case "TIMED_OUT":
      return `Timed out: ${run.reason ?? `over ${run.timeout_seconds} s`}`;
    case "ERROR":
      return `Could not run: ${run.reason ?? "the sandbox failed"}`;
  }
}

function tone(run: Run): string {
  if (!FINISHED.has(run.status)) return "warn";
  if (run.status !== "SUCCEEDED") return "bad";
  return run.counts && run.counts.failed + run.counts.errored === 0 ? "ok" : "bad";
}

function when(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** Poll delays while a run is in flight: a backstop for the notification, so slow when the socket is up. */
function pollDelay(attempt: number): number {
  return socketState.value === "open" ? 20_000 : Math.min(15_000, backoffMs(attempt + 2));
}

export function RunsPanel({ attemptId, canRun, prepare, onStarted }: Props) {
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [listError, setListError] = useState<string>();
  const [selected, setSelected] = useState<RunDetail | null>(null);
  const [detailError, setDetailError] = useState<string>();
  const [starting, setStarting] = useState(false);
  const [startError, setStartError] = useState<string>();
  const [announce, setAnnounce] = useState("");
  const selectedId = useRef<string | null>(null);

  async function loadList() {
    try {
      const page = await call(api.GET("/api/v1/attempts/{attempt_id}/runs", { params: { path: { attempt_id: attemptId }, query: { limit: 20 } } }));
      setRuns(page.items);
      setListError(undefined);
      return page.items;
    } catch (error) {
      setListError(describe(error));
      return null;
    }
  }

  async function loadDetail(runId: string) {
    try {
      const run = await call(api.GET("/api/v1/attempts/{attempt_id}/runs/{run_id}", { params: { path: { attempt_id: attemptId, run_id: runId } } }));
      if (selectedId.current === runId) setSelected(run);
      setRuns((list) => list?.map((r) => (r.id === run.id ? run : r)) ?? list);
      setDetailError(undefined);
      return run;
    } catch (error) {
      setDetailError(describe(error));
      return null;
    }
  }

  function select(runId: string) {
    selectedId.current = runId;
    setSelected(null);
    void loadDetail(runId);
  }

  useEffect(() => {
    void loadList().then((items) => {
      if (items?.[0] && selectedId.current === null) select(items[0].id);
    });
  }, [attemptId]);

  const inFlight = (runs ?? []).filter((r) => !FINISHED.has(r.status)).map((r) => r.id);
  const inFlightKey = inFlight.join(",");

  useEffect(() => {
    if (inFlight.length === 0) return;
    let alive = true;
    let attempt = 0;
    let timer: ReturnType<typeof setTimeout>;
    const finished = async (runId: string) => {
      const run = await loadDetail(runId);
      if (run && FINISHED.has(run.status) && alive) setAnnounce(`Test run finished: ${statusWords(run)}.`);
    };
    const stop = onNotification((n) => {
      if (n.type !== "run.finished" || n.payload.attempt_id !== attemptId) return;
      const runId = String(n.payload.run_id);
      if (inFlight.includes(runId)) void finished(runId);
    });
    const poll = () => {
      timer = setTimeout(async () => {
        for (const id of inFlight) await finished(id);
        attempt += 1;
        if (alive) poll();
      }, pollDelay(attempt));
    };
    poll();
    return () => {
      alive = false;
      clearTimeout(timer);
      stop();
    };
  }, [inFlightKey]);

  async function start() {
    setStarting(true);
    setStartError(undefined);
    // The previous run's results leave at once, so they are not read as the new run's.
    const previous = { id: selectedId.current, run: selected };
    selectedId.current = null;
    setSelected(null);
    try {
      const changed = await prepare();
      const run = await call(api.POST("/api/v1/attempts/{attempt_id}/runs", { params: { path: { attempt_id: attemptId } }, body: { changed_files: changed } }));
      onStarted?.(run.id);
      setRuns((list) => [run, ...(list ?? []).filter((r) => r.id !== run.id)]);
      selectedId.current = run.id;
      setSelected({ ...run, tests: [], artifact_urls: null, artifact_urls_expire_at: null });
      setAnnounce("Test run queued.");
    } catch (error) {
      setStartError(describe(error));
      selectedId.current = previous.id;
      setSelected(previous.run);
    } finally {
      setStarting(false);
    }
  }

  return (
    <div class="runs">
      {canRun && (
        <div class="row">
          <button type="button" onClick={() => void start()} disabled={starting}>
            {starting ? "Saving and starting…" : "Run tests"}
          </button>
          <span class="muted small">Runs the repository's tests on your saved files.</span>
        </div>
      )}
      <p class="visually-hidden" role="status" aria-live="polite">
        {announce}
      </p>
      {startError && <ErrorBox message={startError} />}
      {selected && <RunView run={selected} />}
      {detailError && <ErrorBox message={detailError} onRetry={() => selectedId.current && select(selectedId.current)} />}
      <h3>Runs</h3>
      {listError && <ErrorBox message={listError} onRetry={() => void loadList()} />}
      {!runs && !listError && <Loading what="Loading runs" />}
      {runs && runs.length === 0 && <p class="muted">No runs yet.{canRun ? " Run the tests to see which pass." : ""}</p>}
      {runs && runs.length > 0 && (
        <ul class="run-list">
          {runs.map((run) => (
            <li key={run.id}>
              <button type="button" class="link" aria-current={selected?.id === run.id ? "true" : undefined} onClick={() => select(run.id)}>
                {when(run.created_at)}
              </button>{" "}
              <span class={`badge ${tone(run)}`}>{statusWords(run)}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function RunView({ run }: { run: RunDetail }) {
  const failing = run.tests.filter((t) => t.status === "failed" || t.status === "errored");
  return (
    <div class="run-detail" aria-busy={!FINISHED.has(run.status)}>
      <h3>Run of {when(run.created_at)}</h3>
      <p class={tone(run)}>
        <strong>{statusWords(run)}</strong>
        {run.timings && <span class="muted"> · {(run.timings.run_ms / 1000).toFixed(1)} s</span>}
      </p>
      {run.changed_files.length > 0 && <p class="muted small">With your changes to {run.changed_files.length === 1 ? run.changed_files[0] : `${run.changed_files.length} files`}.</p>}
      {run.artifact_urls && (run.artifact_urls.junit || run.artifact_urls.logs) && (
        <p class="row small">
          {run.artifact_urls.logs && (
            <a href={run.artifact_urls.logs} download rel="noopener">
              Download the log
            </a>
          )}
          {run.artifact_urls.junit && (
            <a href={run.artifact_urls.junit} download rel="noopener">
              Download the JUnit XML
            </a>
          )}
        </p>
      )}
      {run.tests.length > 0 && (
        <table class="tests-table">
          <caption class="visually-hidden">Test results{failing.length ? `, ${failing.length} failing first` : ""}</caption>
          <thead>
            <tr>
              <th scope="col">Test</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {[...failing, ...run.tests.filter((t) => !failing.includes(t))].map((t, i) => (
              <tr key={i}>
                <td>
                  <span class="mono small">{t.classname ? `${t.classname} › ` : ""}</span>
                  {t.name}
                  {t.message && (
                    <details>
                      <summary>Message</summary>
                      <pre tabIndex={0}>{t.message}</pre>
                    </details>
                  )}
                </td>
                <td>
                  <span class={`badge ${t.status === "passed" ? "ok" : t.status === "skipped" ? "warn" : "bad"}`}>{t.status}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
