// /invites/accept?token=…: the link of the invitation e-mail. Accepts the invitation for the
// signed-in user, then offers the task. The token leaves the address bar once it is used, so it
// stays out of the browser's history.
import type { components } from "../../../client/src/index";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call } from "../lib/data";
import { ErrorBox, Loading } from "../components/states";
import { ApiError, describe } from "../lib/errors";
import { me } from "../lib/me";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { failureWords } from "./invitation-words";
import { attemptFor } from "./start-attempt";

type Accepted = components["schemas"]["AcceptedInvitation"];
type Task = components["schemas"]["Task"];

type State = { kind: "accepting" } | { kind: "accepted"; invitation: Accepted; task: Task | null } | { kind: "failed"; status: number; message: string };

export function AcceptInvitationPage({ query }: PageProps) {
  const [token] = useState(() => query.get("token"));
  const [state, setState] = useState<State>({ kind: "accepting" });
  const started = useRef(false);

  useEffect(() => {
    if (!token || started.current) return;
    started.current = true;
    (async () => {
      try {
        const invitation = await call(api.POST("/api/v1/invites/accept", { body: { token } }));
        window.history.replaceState(null, "", "/invites/accept");
        let task: Task | null = null;
        try {
          task = await call(api.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: invitation.task_id } } }));
        } catch {
          // The task's details are a nicety here; the attempt's own page loads them again.
        }
        setState({ kind: "accepted", invitation, task });
      } catch (error) {
        setState({ kind: "failed", status: error instanceof ApiError ? error.status : 0, message: describe(error) });
      }
    })();
  }, [token]);

  if (!token) {
    return (
      <>
        <h1>Accept your invitation</h1>
        <ErrorBox message="This page needs the link from your invitation e-mail, with its token. Open the link from the e-mail again." />
        <p>
          Already accepted? Your tasks are under <a href="/attempts">My assessments</a>.
        </p>
      </>
    );
  }
  if (state.kind === "accepting") return <Loading what="Accepting your invitation" />;
  if (state.kind === "failed") {
    const words = failureWords(state.status, state.message, me.value?.email);
    return (
      <>
        <h1>{words.title}</h1>
        <ErrorBox message={words.body} />
        <p>
          <a href="/attempts">My assessments</a>
        </p>
      </>
    );
  }
  return <Accepted invitation={state.invitation} task={state.task} />;
}

function Accepted({ invitation, task }: { invitation: Accepted; task: Task | null }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const limit = task?.time_limit_minutes;

  async function open() {
    setBusy(true);
    setError(undefined);
    try {
      navigate(`/attempts/${await attemptFor(invitation.task_id)}`);
    } catch (e) {
      setError(describe(e));
      setBusy(false);
    }
  }

  return (
    <div class="accepted">
      <h1>You have joined {invitation.organization_name}</h1>
      <p role="status">Your invitation is accepted. The task is now yours to do.</p>
      <section class="panel" aria-labelledby="task-title">
        <h2 id="task-title">{task?.statement?.title ?? invitation.task_title}</h2>
        <dl class="facts">
          {task?.language && (
            <>
              <dt>Language</dt>
              <dd>{task.language}</dd>
            </>
          )}
          <dt>Time limit</dt>
          <dd>{limit ? `${limit} minutes, counted from when you start` : "None"}</dd>
          {task && (
            <>
              <dt>AI assistant</dt>
              <dd>{task.ai_assistance ? "Allowed" : "Not allowed"}</dd>
            </>
          )}
        </dl>
        <p>Opening the task does not start the clock: you read the task first, then press Start.</p>
        {error && <ErrorBox message={error} />}
        <button type="button" onClick={() => void open()} disabled={busy}>
          {busy ? "Opening…" : "Open the task"}
        </button>
      </section>
      <p>
        You can come back to it any time from <a href="/attempts">My assessments</a>.
      </p>
    </div>
  );
}
