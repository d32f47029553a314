// Small pieces the console's pages share: status badges, a pager, the console's organization.
import type { components } from "../../../client/src/index";
import { ErrorBox } from "../components/states";
import { me, staffOrganization } from "../lib/me";

type Pagination = components["schemas"]["Pagination"];

const OK = new Set(["READY", "VALIDATED", "PUBLISHED", "SCORED", "SUCCEEDED", "used", "sent", "scored"]);
const BAD = new Set(["FAILED", "ERROR", "TIMED_OUT", "revoked", "failed"]);
const UNDER_WAY = new Set(["IMPORTING", "PREPARING", "VALIDATING", "queued", "RUNNING", "IN_PROGRESS", "SUBMITTED", "unused", "expired", "scoring"]);

/** A status as a badge; its words carry the meaning, the color only repeats it. */
export function StatusBadge({ status }: { status: string }) {
  const tone = OK.has(status) ? "ok" : BAD.has(status) ? "bad" : UNDER_WAY.has(status) ? "warn" : "";
  return <span class={`badge ${tone}`}>{status.replace(/_/g, " ")}</span>;
}

/** A list's status filter: "Any" or one status; a change goes back to the list's first page. */
export function StatusFilter<S extends string>(props: { id: string; statuses: readonly S[]; value: S | ""; onChange: (status: S | "") => void }) {
  return (
    <div>
      <label for={props.id}>Status</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as S | "")}>
        <option value="">Any</option>
        {props.statuses.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Previous and next page of a paginated list; nothing when it has one page. */
export function Pager({ pagination, onPage, label }: { pagination: Pagination; onPage: (page: number) => void; label: string }) {
  if (pagination.pages <= 1) return null;
  return (
    <nav class="pager" aria-label={`${label}: pages`}>
      <button type="button" class="secondary" disabled={pagination.current <= 1} onClick={() => onPage(pagination.current - 1)}>
        Previous page
      </button>
      <span>
        Page {pagination.current} of {pagination.pages} ({pagination.total} in all)
      </span>
      <button type="button" class="secondary" disabled={pagination.current >= pagination.pages} onClick={() => onPage(pagination.current + 1)}>
        Next page
      </button>
    </nav>
  );
}

/** The organization the console works in (the first where the session is staff). */
export function useOrganization(): string | undefined {
  return staffOrganization(me.value);
}

export function NoOrganization() {
  return <ErrorBox message="Your session names no organization where you are an interviewer; sign in with an account of your organization." />;
}

/** A line saying an action's outcome, read out by screen readers when it changes. */
export function Outcome({ message }: { message: string | undefined }) {
  return (
    <p class="outcome" role="status" aria-live="polite">
      {message ?? ""}
    </p>
  );
}

/** Test ids (file::scope::name), one per line. */
export function TestIds({ ids }: { ids: string[] }) {
  if (ids.length === 0) return <p class="muted">None.</p>;
  return (
    <ul class="tests">
      {ids.map((id) => (
        <li key={id}>
          <code>{id}</code>
        </li>
      ))}
    </ul>
  );
}
