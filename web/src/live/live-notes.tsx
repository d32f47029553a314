// The report's staff notes of the attempt's live sessions (GET /attempts/{id}/live/notes), read
// when the reviewer opens them: the report page loads with its own two requests.
import { useState } from "preact/hooks";
import { ErrorBox, Loading } from "../components/states";
import { api, call } from "../lib/data";
import { describe } from "../lib/errors";
import type { LiveNote } from "../../../protocol/socket-messages";

export function LiveNotesSection({ attemptId }: { attemptId: string }) {
  const [notes, setNotes] = useState<LiveNote[] | null>(null);
  const [error, setError] = useState<string>();
  // Nothing shows as loading before the section is opened: the page has loaded without it.
  const [asked, setAsked] = useState(false);
  const load = () => {
    setAsked(true);
    setError(undefined);
    call(api.GET("/api/v1/attempts/{attempt_id}/live/notes", { params: { path: { attempt_id: attemptId }, query: { limit: 500 } } })).then(
      (page) => setNotes(page.items),
      (e: unknown) => setError(describe(e)),
    );
  };
  return (
    <details
      class="live-notes"
      onToggle={(event) => {
        if (event.currentTarget.open && notes === null) load();
      }}
    >
      <summary>
        <h2>Live session notes</h2>
      </summary>
      <p class="muted small">Written by staff during live sessions; the candidate never sees them.</p>
      {error ? (
        <ErrorBox message={error} onRetry={load} />
      ) : !notes ? (
        asked && <Loading what="Loading the notes" />
      ) : notes.length === 0 ? (
        <p class="muted">No notes were written in a live session of this attempt.</p>
      ) : (
        <ul class="note-list">
          {notes.map((n) => (
            <li key={n.id}>
              <span class="muted small">
                {n.author.name}, {new Date(n.at).toLocaleString()}
              </span>
              <p>{n.text}</p>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
