// The evaluation timeline as a replay (docs/api.md, "Evaluation"): a scrubber over the
// attempt's events in time order; at each position the event (a save, a run, a chat message,
// IDE activity) and the attempt as of then; at a save, each changed file's diff against its
// previous save, from the save history's contents. The logic is in replay.ts.
import { useEffect, useMemo, useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { runOutcomeText } from "../lib/run-words";
import { formatDateTime, plural } from "./format";
import { KeystrokePlayback } from "./keystroke-playback-panel";
import {
  changesAt,
  decodeContent,
  describeEvent,
  diffStats,
  formatOffset,
  lineDiff,
  orderEvents,
  pickChange,
  positionsOf,
  stateAt,
  stepTo,
  withContext,
  type FileChange,
  type ReplayState,
  type TimelineEvent,
} from "./replay";

type SaveEntry = components["schemas"]["SaveEntry"];

// The timeline is read a page of 100 at a time; ten pages at once, then on request, so a long
// attempt neither waits for everything nor spends the API's rate limit in one go.
const PAGE = 100;
const PAGES_AT_ONCE = 10;

async function readTimeline(attemptId: string, cursor: string | null): Promise<{ events: TimelineEvent[]; cursor: string | null }> {
  const events: TimelineEvent[] = [];
  let next = cursor;
  for (let i = 0; i < PAGES_AT_ONCE; i++) {
    const page = await call(
      api.GET("/api/v1/attempts/{attempt_id}/evaluation/timeline", {
        params: { path: { attempt_id: attemptId }, query: { limit: PAGE, ...(next ? { cursor: next } : {}) } },
      }),
    );
    events.push(...page.items);
    next = page.next_cursor;
    if (!next) break;
  }
  return { events, cursor: next };
}

interface SaveHistory {
  /** Entries the history bound dropped before the oldest kept. */
  dropped: number;
  /** Whether a (save, path) entry's content can still be read. */
  kept: Map<string, boolean | null>;
}

const entryKey = (save: number, path: string) => `${save}\u0000${path}`;

async function readSaves(attemptId: string): Promise<SaveHistory> {
  const kept = new Map<string, boolean | null>();
  let dropped = 0;
  for (let page = 1; page <= 4; page++) {
    const answer = await call(
      api.GET("/api/v1/attempts/{attempt_id}/evaluation/saves", { params: { path: { attempt_id: attemptId }, query: { page, limit: 500 } } }),
    );
    dropped = answer.history.dropped_entries;
    answer.items.forEach((e: SaveEntry) => kept.set(entryKey(e.save, e.path), e.content_kept));
    if (page >= answer.pagination.pages) break;
  }
  return { dropped, kept };
}

// Contents are immutable per save and path: each is fetched once per page load.
const contents = new Map<string, Promise<string | null>>();

function savedContent(attemptId: string, save: number, path: string): Promise<string | null> {
  const key = `${attemptId}\u0000${entryKey(save, path)}`;
  const known = contents.get(key);
  if (known) return known;
  const asked = call(
    api.GET("/api/v1/attempts/{attempt_id}/evaluation/saves/{save}/content", { params: { path: { attempt_id: attemptId, save }, query: { path } } }),
  ).then((entry) => (entry.content_b64 === null ? null : decodeContent(entry.content_b64)));
  contents.set(key, asked);
  asked.catch(() => contents.delete(key));
  return asked;
}

export function ReplayPage({ params }: PageProps) {
  const attemptId = params.attemptId ?? "";
  const first = useLoad(() => readTimeline(attemptId, null), [attemptId]);
  const saves = useLoad(() => readSaves(attemptId), [attemptId]);
  const [later, setLater] = useState<{ events: TimelineEvent[]; cursor: string | null }>();
  const [laterError, setLaterError] = useState<string>();
  const [loadingLater, setLoadingLater] = useState(false);
  const [index, setIndex] = useState(0);
  useEffect(() => {
    setLater(undefined);
    setIndex(0);
  }, [attemptId]);

  const events = useMemo(() => orderEvents([...(first.data?.events ?? []), ...(later?.events ?? [])]), [first.data, later]);
  const cursor = later ? later.cursor : (first.data?.cursor ?? null);

  const readLater = async () => {
    if (!cursor) return;
    setLoadingLater(true);
    setLaterError(undefined);
    try {
      const more = await readTimeline(attemptId, cursor);
      setLater((l) => ({ events: [...(l?.events ?? []), ...more.events], cursor: more.cursor }));
    } catch (e) {
      setLaterError(describe(e));
    } finally {
      setLoadingLater(false);
    }
  };

  const heading = (
    <>
      <p class="crumbs">
        <a href={`/console/attempts/${encodeURIComponent(attemptId)}/report`}>Score report</a>
      </p>
      <h1>Replay of the attempt</h1>
    </>
  );
  if (first.error) {
    return (
      <>
        {heading}
        <ErrorBox message={first.error} onRetry={first.reload} />
      </>
    );
  }
  if (!first.data) {
    return (
      <>
        {heading}
        <Loading what="Loading the timeline" />
      </>
    );
  }
  if (events.length === 0) {
    return (
      <>
        {heading}
        <Empty>The attempt has no events yet.</Empty>
      </>
    );
  }

  const at = Math.min(index, events.length - 1);
  const state = stateAt(events, at)!;
  return (
    <>
      {heading}
      <KeystrokePlayback attemptId={attemptId} />
      {saves.error && <ErrorBox message={`The save history could not be loaded: ${saves.error}`} onRetry={saves.reload} />}
      {saves.data && saves.data.dropped > 0 && (
        <p class="muted">The history keeps the latest saves only: {plural(saves.data.dropped, "older entry", "older entries")} were dropped.</p>
      )}
      <Scrubber events={events} index={at} onIndex={setIndex} />
      {cursor && (
        <div class="row">
          <button type="button" class="secondary" disabled={loadingLater} onClick={() => void readLater()}>
            {loadingLater ? "Loading later events…" : "Load later events"}
          </button>
          {laterError && <ErrorBox message={laterError} />}
        </div>
      )}
      <div class="replay">
        <EventView state={state} />
        <StateView state={state} />
      </div>
      {state.event.type === "save" && <SaveView attemptId={attemptId} changes={changesAt(events, at)} kept={saves.data?.kept} />}
      <EventList events={events} index={at} onIndex={setIndex} />
    </>
  );
}

function Scrubber({ events, index, onIndex }: { events: TimelineEvent[]; index: number; onIndex: (i: number) => void }) {
  const event = events[index]!;
  const offset = formatOffset(Date.parse(event.at) - Date.parse(events[0]!.at));
  const saves = positionsOf(events, "save");
  const runs = positionsOf(events, "run");
  const go = (i: number | null) => i !== null && onIndex(i);
  return (
    <div class="box scrubber-box">
      <label for="replay-position">Position in the timeline</label>
      <input
        id="replay-position"
        class="scrubber"
        type="range"
        min={0}
        max={events.length - 1}
        step={1}
        value={index}
        aria-valuetext={`Event ${index + 1} of ${events.length}: ${describeEvent(event).title}, ${offset}`}
        onInput={(e) => onIndex(Number(e.currentTarget.value))}
      />
      <p class="position" aria-hidden="true">
        Event {index + 1} of {events.length} · {offset}
      </p>
      <div class="row" role="group" aria-label="Step through the timeline">
        <button type="button" class="secondary" disabled={index === 0} onClick={() => onIndex(0)}>
          First
        </button>
        <button type="button" class="secondary" disabled={index === 0} onClick={() => onIndex(index - 1)}>
          Previous event
        </button>
        <button type="button" class="secondary" disabled={index === events.length - 1} onClick={() => onIndex(index + 1)}>
          Next event
        </button>
        <button type="button" class="secondary" disabled={index === events.length - 1} onClick={() => onIndex(events.length - 1)}>
          Last
        </button>
        <button type="button" class="secondary" disabled={stepTo(saves, index, -1) === null} onClick={() => go(stepTo(saves, index, -1))}>
          Previous save
        </button>
        <button type="button" class="secondary" disabled={stepTo(saves, index, 1) === null} onClick={() => go(stepTo(saves, index, 1))}>
          Next save
        </button>
        <button type="button" class="secondary" disabled={stepTo(runs, index, 1) === null} onClick={() => go(stepTo(runs, index, 1))}>
          Next run
        </button>
      </div>
    </div>
  );
}

function EventView({ state }: { state: ReplayState }) {
  const { event } = state;
  const { title, details } = describeEvent(event);
  return (
    <section class="box" aria-labelledby="event-heading">
      <h2 id="event-heading">{title}</h2>
      <p class="muted">
        <time dateTime={event.at}>{formatDateTime(event.at)}</time> · {formatOffset(state.offsetMs)} from the start
      </p>
      {details.length > 0 && (
        <ul>
          {details.map((d, i) => (
            <li key={i}>{d}</li>
          ))}
        </ul>
      )}
      {event.type === "ai_chat_message" && <blockquote class="replay-chat">{event.message.content}</blockquote>}
      {event.type === "submitted" && event.explanation && (
        <>
          <h3>The candidate's explanation</h3>
          <blockquote class="explanation">{event.explanation}</blockquote>
        </>
      )}
    </section>
  );
}

function StateView({ state }: { state: ReplayState }) {
  return (
    <section class="box" aria-labelledby="state-heading">
      <h2 id="state-heading">The attempt by then</h2>
      <ul>
        <li>{plural(state.saves, "save")}</li>
        <li>
          {plural(state.runs, "test run")}
          {state.lastRun && `, the last: ${runOutcomeText(state.lastRun.status, state.lastRun.counts)}`}
        </li>
        <li>{plural(state.chatMessages, "AI chat message")}</li>
        <li>{state.submitted ? "Submitted" : "Not submitted"}</li>
      </ul>
      {state.files.length > 0 && (
        <>
          <h3>Files changed so far</h3>
          <ul class="files">
            {state.files.map((f) => (
              <li key={f.path}>
                <code>{f.path}</code> <span class="muted">{f.op === "delete" ? `deleted in save ${f.save}` : `last saved in save ${f.save}`}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function SaveView({ attemptId, changes, kept }: { attemptId: string; changes: FileChange[]; kept: Map<string, boolean | null> | undefined }) {
  const [wanted, setWanted] = useState<string | null>(null);
  const change = pickChange(changes, wanted);
  if (!change) return null;
  return (
    <section aria-labelledby="diff-heading">
      <h2 id="diff-heading">What the save changed</h2>
      {changes.length > 1 && (
        <div>
          <label for="replay-file">File</label>
          <select id="replay-file" value={change.path} onChange={(e) => setWanted(e.currentTarget.value)}>
            {changes.map((c) => (
              <option key={c.path} value={c.path}>
                {c.path}
                {c.op === "delete" ? " (deleted)" : ""}
              </option>
            ))}
          </select>
        </div>
      )}
      <FileDiff attemptId={attemptId} change={change} kept={kept} />
    </section>
  );
}

// Scrubbing passes many saves in a second; contents are fetched once the position rests.
const SETTLE_MS = 300;

type DiffState = { loading: true } | { error: string } | { before: string; after: string };

function FileDiff({ attemptId, change, kept }: { attemptId: string; change: FileChange; kept: Map<string, boolean | null> | undefined }) {
  const [diff, setDiff] = useState<DiffState>({ loading: true });
  const dropped = (save: number | null) => save !== null && kept?.get(entryKey(save, change.path)) === false;

  useEffect(() => {
    let alive = true;
    setDiff({ loading: true });
    const timer = setTimeout(() => {
      const content = (save: number | null) => (save === null || dropped(save) ? Promise.resolve(null) : savedContent(attemptId, save, change.path));
      Promise.all([content(change.previousSave), change.op === "delete" || dropped(change.save) ? Promise.resolve(null) : content(change.save)]).then(
        ([before, after]) => alive && setDiff({ before: before ?? "", after: after ?? "" }),
        (e: unknown) => alive && setDiff({ error: describe(e) }),
      );
    }, SETTLE_MS);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [attemptId, change.path, change.save, change.previousSave, kept]);

  const notes: string[] = [];
  if (change.previousSave === null) notes.push("This is the file's first save in the history; the task's own version is not part of it, so the file is shown whole.");
  else notes.push(`Compared with save ${change.previousSave}, the file's previous save.`);
  if (dropped(change.save)) notes.push("This save's content was dropped by the history's size bound.");
  if (dropped(change.previousSave)) notes.push("The previous save's content was dropped by the history's size bound.");

  return (
    <div class="file-diff">
      <h3>
        <code>{change.path}</code> in save {change.save}
      </h3>
      {notes.map((n) => (
        <p class="muted" key={n}>
          {n}
        </p>
      ))}
      {"loading" in diff ? (
        <Loading what="Loading the file's contents" />
      ) : "error" in diff ? (
        <ErrorBox message={diff.error} />
      ) : (
        <DiffText before={diff.before} after={diff.after} label={`Changes to ${change.path} in save ${change.save}`} />
      )}
    </div>
  );
}

function DiffText({ before, after, label }: { before: string; after: string; label: string }) {
  const lines = useMemo(() => lineDiff(before, after), [before, after]);
  const { added, removed } = diffStats(lines);
  const rows = withContext(lines);
  if (added === 0 && removed === 0) return <p>No lines changed.</p>;
  return (
    <>
      <p>
        {plural(added, "line")} added, {plural(removed, "line")} removed.
      </p>
      <pre class="diff" tabIndex={0} role="region" aria-label={label}>
        {rows.map((r, i) =>
          r.kind === "skip" ? (
            <span class="skip" key={i}>
              {`⋯ ${plural(r.count, "unchanged line")}`}
            </span>
          ) : (
            <span class={r.kind} key={i}>
              {`${r.kind === "add" ? "+" : r.kind === "del" ? "-" : " "} ${String(r.newNo ?? r.oldNo ?? "").padStart(4)}  ${r.text}`}
            </span>
          ),
        )}
      </pre>
    </>
  );
}

function EventList({ events, index, onIndex }: { events: TimelineEvent[]; index: number; onIndex: (i: number) => void }) {
  const start = Date.parse(events[0]!.at);
  return (
    <section aria-labelledby="events-heading">
      <h2 id="events-heading">All events</h2>
      <ol class="event-list">
        {events.map((e, i) => (
          <li key={i}>
            <button type="button" class="link" aria-current={i === index ? "step" : undefined} onClick={() => onIndex(i)}>
              {formatOffset(Date.parse(e.at) - start)} {describeEvent(e).title}
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
