// /ide#attempt=att_…&token=assay_ide_…: an IDE session link opened in the browser. The token is
// in the fragment, which browsers never send to a server; it is taken from the address bar at
// once, kept in this page's memory only, and used as the Bearer credential of its own client,
// for what an IDE session token may do (docs/api.md, "IDE sessions"): start, submit, AI chat.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { createAssayClient } from "../../../client/src/index";
import { ErrorBox, Loading } from "../components/states";
import { ApiError, describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { attemptTelemetry, type AttemptTelemetry } from "./attempt-telemetry";
import { callQuietly, type Backend } from "./backend";
import { ChatPanel } from "./chat-panel";
import { SubmitDialog } from "./submit-dialog";
import { sentence } from "./words";

interface Link {
  attemptId: string;
  token: string;
}

/** The attempt and token of the address's fragment, removed from the address bar (and so from history) at once. */
function takeLink(): Link | null {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  if (window.location.hash) window.history.replaceState(null, "", window.location.pathname);
  const attemptId = fragment.get("attempt");
  const token = fragment.get("token");
  return attemptId && token ? { attemptId, token } : null;
}

type Check = { kind: "checking" } | { kind: "valid" } | { kind: "refused"; status: number; message: string };

export function IdeSessionPage(_props: PageProps) {
  const [link] = useState(takeLink);
  if (!link) {
    return (
      <>
        <h1>IDE session</h1>
        <ErrorBox message="This page opens an IDE session link, whose token is in the part of the address after #. The address has none (it is removed from the address bar once read, so a reload loses it). Open the link from your IDE again, or sign in to work in the browser." />
        <p>
          <a href="/attempts" target="_self">
            Sign in and open My assessments
          </a>
        </p>
      </>
    );
  }
  return <Session link={link} />;
}

function Session({ link }: { link: Link }) {
  const backend = useMemo<Backend>(
    () => ({ client: createAssayClient({ baseUrl: window.location.origin, token: link.token }), call: callQuietly }),
    [link.token],
  );
  const [check, setCheck] = useState<Check>({ kind: "checking" });
  const workspaceHref = `/attempts/${encodeURIComponent(link.attemptId)}`;

  useEffect(() => {
    backend
      .call(backend.client.GET("/api/v1/attempts/{attempt_id}/ai-chat/messages", { params: { path: { attempt_id: link.attemptId }, query: { limit: 1 } } }))
      .then(
        () => setCheck({ kind: "valid" }),
        (error: unknown) => setCheck({ kind: "refused", status: error instanceof ApiError ? error.status : 0, message: describe(error) }),
      );
  }, [backend]);

  return (
    <>
      <h1>IDE session</h1>
      <p>
        Attempt <span class="mono">{link.attemptId}</span>
      </p>
      {check.kind === "checking" && <Loading what="Checking the session" />}
      {check.kind === "refused" && (
        <>
          <ErrorBox message={check.status === 401 ? `This IDE session cannot be used: ${sentence(check.message)}` : check.message} />
          <p>
            Create a new IDE session link in your IDE, or{" "}
            <a href={workspaceHref} target="_self">
              sign in and open the attempt in the browser
            </a>
            .
          </p>
        </>
      )}
      {check.kind === "valid" && <Actions backend={backend} attemptId={link.attemptId} workspaceHref={workspaceHref} />}
    </>
  );
}

function Actions({ backend, attemptId, workspaceHref }: { backend: Backend; attemptId: string; workspaceHref: string }) {
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [submitOpen, setSubmitOpen] = useState(false);
  const [submitError, setSubmitError] = useState<string>();
  const [submitted, setSubmitted] = useState<string | null>(null);
  const telemetry = useRef<AttemptTelemetry | null>(null);

  useEffect(() => {
    const t = attemptTelemetry(backend, attemptId);
    telemetry.current = t;
    return () => t.dispose();
  }, [backend, attemptId]);

  async function start() {
    setBusy(true);
    setError(undefined);
    try {
      const attempt = await backend.call(backend.client.POST("/api/v1/attempts/{attempt_id}/start", { params: { path: { attempt_id: attemptId } } }));
      setStatus(attempt.deadline_at ? `Started. The time is up at ${new Date(attempt.deadline_at).toLocaleString()}.` : "Started. This task has no time limit.");
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  }

  async function submit(explanation: string) {
    setBusy(true);
    setSubmitError(undefined);
    telemetry.current?.record({ kind: "submit_clicked" });
    await telemetry.current?.flush();
    try {
      const attempt = await backend.call(
        backend.client.POST("/api/v1/attempts/{attempt_id}/submit", { params: { path: { attempt_id: attemptId } }, body: explanation ? { explanation } : {} }),
      );
      setSubmitOpen(false);
      setStatus(undefined);
      setSubmitted(attempt.submitted_at ? new Date(attempt.submitted_at).toLocaleString() : "now");
    } catch (e) {
      setSubmitError(describe(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <section aria-labelledby="session-actions" class="panel">
        <h2 id="session-actions">The attempt</h2>
        {submitted ? (
          <p role="status">
            <strong>Submitted on {submitted}.</strong> The attempt is final: the work saved in it is what is scored.
          </p>
        ) : (
          <>
            <p>
              This link lets your IDE's session start and submit the attempt and talk to the AI assistant. To edit files and run tests in the browser,{" "}
              <a href={workspaceHref} target="_self">
                open the full workspace
              </a>{" "}
              (you sign in there).
            </p>
            <div class="row">
              <button type="button" onClick={() => void start()} disabled={busy}>
                Start the attempt
              </button>
              <button type="button" class="secondary" onClick={() => setSubmitOpen(true)} disabled={busy}>
                Submit…
              </button>
            </div>
            <p class="muted small">Starting begins the time limit, if the task has one.</p>
          </>
        )}
        <p role="status" aria-live="polite">
          {status ?? ""}
        </p>
        {error && <ErrorBox message={error} />}
      </section>
      <section aria-labelledby="session-chat">
        <h2 id="session-chat">AI assistant</h2>
        <ChatPanel
          backend={backend}
          attemptId={attemptId}
          canSend={!submitted}
          onSent={(chars) => telemetry.current?.record({ kind: "ai_chat_message_sent", message_chars: chars })}
        />
      </section>
      <SubmitDialog
        open={submitOpen}
        busy={busy}
        error={submitError}
        holds="the changes your IDE saved to the attempt"
        onCancel={() => {
          setSubmitOpen(false);
          setSubmitError(undefined);
        }}
        onConfirm={(explanation) => void submit(explanation)}
      />
    </>
  );
}
