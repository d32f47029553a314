// /attempts/:attemptId: the attempt, its task, its files and its score report in one request
// (GET /attempts/{id}/workspace), then the start page (NOT_STARTED), the workspace (IN_PROGRESS)
// or the submitted work, read-only; the open file's content is the page's second request.
import { useEffect, useState } from "preact/hooks";
import { api, call, read, useLoad } from "../lib/data";
import { ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { TaskInfo, Workspace, type Attempt, type Task } from "./workspace";

export function WorkspacePage({ params }: PageProps) {
  const attemptId = params.attemptId!;
  const loaded = useLoad(() => read("/api/v1/attempts/{attempt_id}/workspace", { params: { path: { attempt_id: attemptId } } }), [attemptId]);
  const [attempt, setAttempt] = useState<Attempt | null>(null);
  const [justSubmitted, setJustSubmitted] = useState(false);

  useEffect(() => {
    if (loaded.data) setAttempt(loaded.data.attempt);
  }, [loaded.data]);

  if (loaded.error && !loaded.data) {
    const message =
      loaded.status === 404 ? `There is no attempt ${attemptId} that you may open: it does not exist, or it is someone else's. Your assessments are under My assessments.` : loaded.error;
    return (
      <>
        <h1>Your assessment</h1>
        <ErrorBox message={message} onRetry={loaded.status === 404 ? undefined : loaded.reload} />
        <p>
          <a href="/attempts">My assessments</a>
        </p>
      </>
    );
  }
  if (!loaded.data || !attempt) return <Loading what="Loading your assessment" />;
  const { task, files, score_report } = loaded.data;

  if (attempt.status === "NOT_STARTED") return <StartPage attempt={attempt} task={task} onStarted={setAttempt} />;
  return (
    <Workspace
      key={attempt.status === "IN_PROGRESS" ? "live" : "submitted"}
      attempt={attempt}
      task={task}
      listed={files}
      scoreReport={score_report}
      justSubmitted={justSubmitted}
      onAttempt={(next) => {
        setJustSubmitted(next.status !== "IN_PROGRESS");
        setAttempt(next);
      }}
      reload={loaded.reload}
    />
  );
}

function StartPage({ attempt, task, onStarted }: { attempt: Attempt; task: Task; onStarted: (attempt: Attempt) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const limit = attempt.time_limit_minutes;

  async function start() {
    setBusy(true);
    setError(undefined);
    try {
      onStarted(await call(api.POST("/api/v1/attempts/{attempt_id}/start", { params: { path: { attempt_id: attempt.id } } })));
    } catch (e) {
      setError(describe(e));
      setBusy(false);
    }
  }

  return (
    <div class="start-page">
      <h1>{task.statement?.title ?? "Your assessment"}</h1>
      <div class="panel start-box">
        <p>
          {limit
            ? `You have ${limit} minutes from the moment you start. The clock starts when you press Start and does not stop; when the time is up, the work you saved is submitted automatically.`
            : "This task has no time limit. Start when you are ready; you submit when you are done."}
        </p>
        <p>Once started you can edit the code, run the tests and, when you are done, submit your work.</p>
        {error && <ErrorBox message={error} />}
        <button type="button" onClick={() => void start()} disabled={busy}>
          {busy ? "Starting…" : limit ? `Start: the ${limit} minutes begin` : "Start"}
        </button>
      </div>
      <TaskInfo task={task} attempt={attempt} />
    </div>
  );
}
