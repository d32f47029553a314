// A task's candidates: invite one by e-mail (POST /invites/candidate), the invitations with
// their state and delivery (resend, revoke), and the attempts with their status, score and
// links to the score report and the replay. Both lists follow the notifications about the task.
import { useEffect, useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call } from "../api";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import { onNotification } from "../lib/notification-socket";
import { useLoad } from "../lib/use-load";
import { formatDateTime } from "./format";
import { Outcome, Pager, StatusBadge } from "./parts";

type Task = components["schemas"]["Task"];
type Invitation = components["schemas"]["Invitation"];
type Attempt = components["schemas"]["Attempt"];

const ABOUT_THE_TASK = new Set(["invitation.accepted", "attempt.submitted", "attempt.auto_submitted", "score_report.ready"]);

export function TaskCandidates({ task }: { task: Task }) {
  const [invitePage, setInvitePage] = useState(1);
  const [attemptPage, setAttemptPage] = useState(1);
  const invitations = useLoad(
    () =>
      call(
        api.GET("/api/v1/invites", {
          params: { query: { organization_id: task.organization_id, task_id: task.task_id, page: invitePage, limit: 20 } },
        }),
      ),
    [task.task_id, invitePage],
  );
  const attempts = useLoad(
    () => call(api.GET("/api/v1/attempts", { params: { query: { task_id: task.task_id, page: attemptPage, limit: 10 } } })),
    [task.task_id, attemptPage],
  );
  useEffect(
    () =>
      onNotification((n) => {
        if (!ABOUT_THE_TASK.has(n.type) || n.payload.task_id !== task.task_id) return;
        invitations.reload();
        attempts.reload();
      }),
    [task.task_id],
  );

  // Attempts name their candidate by user id; the invitations they accepted give the address.
  const emails = new Map((invitations.data?.items ?? []).filter((i) => i.used_by).map((i) => [i.used_by!, i.email]));
  const open = task.status === "READY" && !task.archived_at;

  return (
    <>
      <section aria-labelledby="invite-heading">
        <h2 id="invite-heading">Invitations</h2>
        {open ? (
          <InviteForm taskId={task.task_id} onInvited={invitations.reload} />
        ) : (
          <p class="muted">{task.archived_at ? "The task is archived: it takes no new invitations." : "Candidates can be invited once the task is READY."}</p>
        )}
        {invitations.error ? (
          <ErrorBox message={invitations.error} onRetry={invitations.reload} />
        ) : !invitations.data ? (
          <Loading what="Loading invitations" />
        ) : invitations.data.items.length === 0 ? (
          <Empty>No one is invited to this task yet.</Empty>
        ) : (
          <>
            <InvitationTable items={invitations.data.items} onChanged={invitations.reload} />
            <Pager pagination={invitations.data.pagination} onPage={setInvitePage} label="Invitations" />
          </>
        )}
      </section>
      <section aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts</h2>
        {attempts.error ? (
          <ErrorBox message={attempts.error} onRetry={attempts.reload} />
        ) : !attempts.data ? (
          <Loading what="Loading attempts" />
        ) : attempts.data.items.length === 0 ? (
          <Empty>No attempts yet.</Empty>
        ) : (
          <>
            <AttemptTable items={attempts.data.items} emails={emails} />
            <Pager pagination={attempts.data.pagination} onPage={setAttemptPage} label="Attempts" />
          </>
        )}
      </section>
    </>
  );
}

function InviteForm({ taskId, onInvited }: { taskId: string; onInvited: () => void }) {
  const [email, setEmail] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [outcome, setOutcome] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setOutcome(undefined);
    try {
      const invitation = await call(api.POST("/api/v1/invites/candidate", { body: { email: email.trim(), task_id: taskId } }));
      setOutcome(`Invitation to ${invitation.email} queued for sending.`);
      setEmail("");
      onInvited();
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="invite" onSubmit={(e) => void submit(e)}>
      <label for="invite-email">Candidate's e-mail address</label>
      <div class="row">
        <input id="invite-email" type="email" required autoComplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? "Inviting…" : "Invite"}
        </button>
      </div>
      {error && <ErrorBox message={error} />}
      <Outcome message={outcome} />
    </form>
  );
}

function InvitationTable({ items, onChanged }: { items: Invitation[]; onChanged: () => void }) {
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const [outcome, setOutcome] = useState<string>();

  const act = async (invitation: Invitation, action: "resend" | "revoke") => {
    if (action === "revoke" && !window.confirm(`Revoke the invitation of ${invitation.email}? Its link stops working.`)) return;
    setBusy(invitation.invite_id);
    setError(undefined);
    setOutcome(undefined);
    try {
      const path = { params: { path: { invite_id: invitation.invite_id } } };
      if (action === "resend") await call(api.POST("/api/v1/invites/{invite_id}/resend", path));
      else await call(api.DELETE("/api/v1/invites/{invite_id}", path));
      setOutcome(action === "resend" ? `A new link was sent to ${invitation.email}.` : `The invitation of ${invitation.email} is revoked.`);
      onChanged();
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <>
      {error && <ErrorBox message={error} />}
      <Outcome message={outcome} />
      <table>
        <thead>
          <tr>
            <th scope="col">Candidate</th>
            <th scope="col">Status</th>
            <th scope="col">E-mail</th>
            <th scope="col">Expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => {
            const reopenable = (i.status === "unused" || i.status === "expired") && !i.superseded_by;
            return (
              <tr key={i.invite_id}>
                <td>{i.email}</td>
                <td>
                  <StatusBadge status={i.status} />
                  {i.used_at && <div class="muted">accepted {formatDateTime(i.used_at)}</div>}
                  {i.superseded_by && <div class="muted">replaced by a newer invitation</div>}
                </td>
                <td>
                  <StatusBadge status={i.delivery_status} />
                  {i.delivery_error && <div class="bad">{i.delivery_error}</div>}
                </td>
                <td>{formatDateTime(i.expires_at)}</td>
                <td>
                  {reopenable && (
                    <div class="row">
                      <button type="button" class="secondary" disabled={busy === i.invite_id} onClick={() => void act(i, "resend")} aria-label={`Resend: ${i.email}`}>
                        Resend
                      </button>
                      <button type="button" class="danger" disabled={busy === i.invite_id} onClick={() => void act(i, "revoke")} aria-label={`Revoke: ${i.email}`}>
                        Revoke
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function AttemptTable({ items, emails }: { items: Attempt[]; emails: Map<string, string> }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Candidate</th>
          <th scope="col">Status</th>
          <th scope="col">Started</th>
          <th scope="col">Submitted</th>
          <th scope="col">Score</th>
          <th scope="col">Review</th>
        </tr>
      </thead>
      <tbody>
        {items.map((a) => {
          const id = encodeURIComponent(a.id);
          const who = emails.get(a.candidate_id) ?? a.candidate_id;
          return (
            <tr key={a.id}>
              <td>{who}</td>
              <td>
                <StatusBadge status={a.status} />
                {a.auto_submitted && <div class="muted">by the deadline</div>}
              </td>
              <td>{formatDateTime(a.started_at)}</td>
              <td>{formatDateTime(a.submitted_at)}</td>
              <td>{a.score_id ? <Score attemptId={a.id} scoreId={a.score_id} /> : "—"}</td>
              <td>
                <div class="row">
                  <a href={`/console/attempts/${id}/report`} aria-label={`Report: ${who}`}>
                    Report
                  </a>
                  {a.started_at && (
                    <a href={`/console/attempts/${id}/replay`} aria-label={`Replay: ${who}`}>
                      Replay
                    </a>
                  )}
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

// A score report never changes under its id, so each is asked for once per page load, and one
// at a time, which keeps a page of scored attempts inside the API's burst limit.
const scores = new Map<string, Promise<number>>();
let queue: Promise<unknown> = Promise.resolve();

function overallScore(attemptId: string, scoreId: string): Promise<number> {
  const known = scores.get(scoreId);
  if (known) return known;
  const asked = queue.then(() => call(api.GET("/api/v1/attempts/{attempt_id}/score-report", { params: { path: { attempt_id: attemptId } } })));
  const score = asked.then((report) => report.overall_score);
  queue = score.catch(() => undefined);
  scores.set(scoreId, score);
  score.catch(() => scores.delete(scoreId));
  return score;
}

function Score({ attemptId, scoreId }: { attemptId: string; scoreId: string }) {
  const [value, setValue] = useState<number | string>();
  useEffect(() => {
    let alive = true;
    overallScore(attemptId, scoreId).then(
      (n) => alive && setValue(n),
      (e: unknown) => alive && setValue(`not available: ${describe(e)}`),
    );
    return () => {
      alive = false;
    };
  }, [scoreId]);
  return <>{value ?? "…"}</>;
}
