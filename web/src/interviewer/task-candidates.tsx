// A task's candidates in one list (GET /tasks/{task_id}/candidates): everyone invited to the task
// or with an attempt on it, each with their invitation's state and delivery (resend, revoke), their
// attempt's status and score, and links to the score report and the replay. Invite one by e-mail
// (POST /invites/candidate). One request a page, whatever the page holds; it follows the
// notifications about the task.
import { useEffect, useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import { onNotification } from "../lib/notification-socket";
import { formatDateTime } from "./format";
import { Outcome, Pager, StatusBadge } from "./parts";

type Task = components["schemas"]["Task"];
type Invitation = components["schemas"]["Invitation"];
type Candidate = components["schemas"]["TaskCandidate"];

const ABOUT_THE_TASK = new Set(["invitation.accepted", "attempt.submitted", "attempt.auto_submitted", "score_report.ready"]);
const PAGE_SIZE = 20;

export function TaskCandidates({ task }: { task: Task }) {
  const [page, setPage] = useState(1);
  const candidates = useLoad(
    () => call(api.GET("/api/v1/tasks/{task_id}/candidates", { params: { path: { task_id: task.task_id }, query: { page, limit: PAGE_SIZE } } })),
    [task.task_id, page],
  );
  useEffect(
    () =>
      onNotification((n) => {
        if (ABOUT_THE_TASK.has(n.type) && n.payload.task_id === task.task_id) candidates.reload();
      }),
    [task.task_id],
  );
  const open = task.status === "READY" && !task.archived_at;

  return (
    <section aria-labelledby="candidates-heading">
      <h2 id="candidates-heading">Candidates</h2>
      {open ? (
        <InviteForm taskId={task.task_id} onInvited={candidates.reload} />
      ) : (
        <p class="muted">{task.archived_at ? "The task is archived: it takes no new invitations." : "Candidates can be invited once the task is READY."}</p>
      )}
      {candidates.error ? (
        <ErrorBox message={candidates.error} onRetry={candidates.reload} />
      ) : !candidates.data ? (
        <Loading what="Loading the candidates" />
      ) : candidates.data.items.length === 0 ? (
        <Empty>No one is invited to this task yet, and no one has an attempt on it.</Empty>
      ) : (
        <>
          <CandidateTable items={candidates.data.items} onChanged={candidates.reload} live={task.live_sessions === true} />
          <Pager pagination={candidates.data.pagination} onPage={setPage} label="Candidates" />
        </>
      )}
    </section>
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

/** The candidate as the API knows them: their e-mail address, else their user id. */
const nameOf = (c: Candidate) => c.candidate.email ?? c.candidate.id ?? "unknown";

/** `live`: the task lets staff join a started attempt live (docs/web-app.md, "Live sessions"). */
function CandidateTable({ items, onChanged, live }: { items: Candidate[]; onChanged: () => void; live: boolean }) {
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
            <th scope="col">Invitation</th>
            <th scope="col">Attempt</th>
            <th scope="col">Score</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((c) => {
            const who = nameOf(c);
            const i = c.invitation;
            const a = c.attempt;
            const reopenable = i !== null && (i.status === "unused" || i.status === "expired") && !i.superseded_by;
            return (
              <tr key={c.candidate.id ?? i?.invite_id ?? who}>
                <td>{who}</td>
                <td>
                  {i ? (
                    <>
                      <StatusBadge status={i.status} />
                      {i.used_at ? (
                        <div class="muted">accepted {formatDateTime(i.used_at)}</div>
                      ) : (
                        <>
                          <div>
                            e-mail: <StatusBadge status={i.delivery_status} />
                          </div>
                          {i.delivery_error && <div class="bad">{i.delivery_error}</div>}
                          <div class="muted">expires {formatDateTime(i.expires_at)}</div>
                        </>
                      )}
                    </>
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
                <td>
                  {a ? (
                    <>
                      <StatusBadge status={a.status} />
                      {a.auto_submitted && <div class="muted">by the deadline</div>}
                      {a.started_at && <div class="muted">started {formatDateTime(a.started_at)}</div>}
                      {a.submitted_at && <div class="muted">submitted {formatDateTime(a.submitted_at)}</div>}
                      {c.attempts > 1 && <div class="muted">the newest of {c.attempts} attempts</div>}
                    </>
                  ) : (
                    <span class="muted">not started</span>
                  )}
                </td>
                <td>{scoreText(c)}</td>
                <td>
                  <div class="row">
                    {a && (
                      <a href={`/console/attempts/${encodeURIComponent(a.id)}/report`} aria-label={`Report: ${who}`}>
                        Report
                      </a>
                    )}
                    {a?.started_at && (
                      <a href={`/console/attempts/${encodeURIComponent(a.id)}/replay`} aria-label={`Replay: ${who}`}>
                        Replay
                      </a>
                    )}
                    {live && a?.status === "IN_PROGRESS" && (
                      <a href={`/console/attempts/${encodeURIComponent(a.id)}/live`} aria-label={`Join live: ${who}`}>
                        Join live
                      </a>
                    )}
                    {i && reopenable && (
                      <>
                        <button type="button" class="secondary" disabled={busy === i.invite_id} onClick={() => void act(i, "resend")} aria-label={`Resend: ${i.email}`}>
                          Resend
                        </button>
                        <button type="button" class="danger" disabled={busy === i.invite_id} onClick={() => void act(i, "revoke")} aria-label={`Revoke: ${i.email}`}>
                          Revoke
                        </button>
                      </>
                    )}
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

/** The newest attempt's score: the overall score in force, else how scoring stands. */
export function scoreText(c: Pick<Candidate, "score">): string {
  const { status, overall_score } = c.score;
  if (overall_score !== null) return status === "scoring" ? `${overall_score} (being scored again)` : String(overall_score);
  switch (status) {
    case "scoring":
      return "being scored";
    case "failed":
      return "scoring failed";
    default:
      return "—";
  }
}
