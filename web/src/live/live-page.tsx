// /console/attempts/:attemptId/live: staff in a candidate's attempt, live (docs/web-app.md, "Live
// sessions"). The same file tree and editor as the candidate's, bound to the shared document, so
// each sees the other's edits and cursor as they are typed; the file the candidate shows is
// followed unless staff open another; who is there; the candidate's runs and their results, and
// the programs they run in the terminal, as they happen; and notes only staff see. The page's
// one request is the attempt's view (GET /attempts/{id}/workspace: the attempt, its task and its
// files); the rest comes over the live socket.
import { useEffect, useRef, useState } from "preact/hooks";
import { LIVE_LIMITS, type LiveNote, type LiveServerMessage } from "../../../protocol/socket-messages";
import { Editors } from "../candidate/editors";
import { FileTree } from "../candidate/file-tree";
import { loadLanguage } from "../candidate/languages";
import { RunsPanel } from "../candidate/runs-panel";
import { ErrorBox, LoadError, Loading } from "../components/states";
import { read, useLoad } from "../lib/data";
import { describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { withSaved, type FileEntry } from "./live-files";
import { LiveStatus } from "./live-status";
import { useLiveSession } from "./use-live";
import { WatchedTerminal } from "./watched-terminal";

export function LivePage({ params }: PageProps) {
  const attemptId = params.attemptId ?? "";
  const loaded = useLoad(() => read("/api/v1/attempts/{attempt_id}/workspace", { params: { path: { attempt_id: attemptId } } }), [attemptId]);
  if (!loaded.data) {
    return (
      <>
        <h1>Live session</h1>
        {loaded.error ? (
          <LoadError error={loaded.error} status={loaded.status} what="This attempt" back={{ href: "/console/tasks", label: "Back to the tasks" }} onRetry={loaded.reload} />
        ) : (
          <Loading what="Loading the attempt" />
        )}
      </>
    );
  }
  const { attempt, task, files } = loaded.data;
  if (attempt.status === "NOT_STARTED") {
    return (
      <>
        <h1>Live session</h1>
        <ErrorBox message="The candidate has not started this attempt yet: a live session opens on a started attempt." onRetry={loaded.reload} />
      </>
    );
  }
  return <LiveView attemptId={attemptId} title={task.statement?.title ?? task.title ?? "the attempt"} language={task.language} files={files} />;
}

interface ViewProps {
  attemptId: string;
  title: string;
  language: string | null | undefined;
  files: FileEntry[];
}

function LiveView({ attemptId, title, language, files: listed }: ViewProps) {
  const [files, setFiles] = useState(listed);
  const [notes, setNotes] = useState<LiveNote[]>([]);
  const [runsVersion, setRunsVersion] = useState(0);
  // The runs are read once asked for, or once a run starts in the session: the page loads with one request.
  const [showRuns, setShowRuns] = useState(false);
  const [executionId, setExecutionId] = useState<string | null>(null);
  const [sessionError, setSessionError] = useState<string>();
  const onMessage = (message: LiveServerMessage) => {
    if (message.type === "notes") setNotes(message.notes);
    else if (message.type === "note") setNotes((list) => (list.some((n) => n.id === message.id) ? list : [...list, message]));
    // The runs panel reads the runs again: the new one, and a finished one's results.
    else if (message.type === "run") setRunsVersion((v) => v + 1);
    else if (message.type === "execution") setExecutionId(message.execution_id);
    else if (message.type === "error") setSessionError(message.detail);
    // A file the candidate created in the session shows in the tree once saved.
    else if (message.type === "saved") setFiles((list) => withSaved(list, message.paths));
  };
  const live = useLiveSession(attemptId, true, onMessage);
  const [active, setActive] = useState<string | null>(null);
  const [follow, setFollow] = useState(true);
  const [opened, setOpened] = useState<{ path: string; ready: boolean } | null>(null);
  const editorHost = useRef<HTMLDivElement>(null);
  const editors = useRef<Editors | null>(null);
  const session = live.session;

  // The editor: staff type in the shared document too, until the attempt is submitted.
  useEffect(() => {
    const created = new Editors(editorHost.current!, { readOnly: live.readOnly, onChange: () => {} });
    editors.current = created;
    let alive = true;
    loadLanguage(language ?? null).then(
      (pack) => alive && created.setLanguage(pack),
      () => {},
    );
    return () => {
      alive = false;
      created.destroy();
      editors.current = null;
    };
  }, [live.readOnly]);

  useEffect(() => {
    if (follow && live.followed) setActive(live.followed);
  }, [follow, live.followed]);

  useEffect(() => {
    const editor = editors.current;
    if (!active || !session || !editor) return;
    let alive = true;
    setOpened({ path: active, ready: false });
    session.showing(active);
    session.bind(active).then(({ text, extension }) => {
      if (!alive) return;
      editor.forget(active);
      editor.show(active, text, extension);
      setOpened({ path: active, ready: true });
    }, (error: unknown) => alive && setSessionError(describe(error)));
    return () => {
      alive = false;
    };
  }, [active, session, live.readOnly]);

  const candidate = live.participants.find((p) => p.role === "candidate");
  return (
    <div class={`workspace live-view${live.readOnly ? " read-only" : ""}`}>
      <div class="toolbar">
        <h1>Live: {title}</h1>
        <LiveStatus view={live} />
        <label class="row small">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />
          Follow the candidate's file
        </label>
      </div>
      {(live.readOnly || sessionError || (live.state === "open" && !candidate)) && (
        <div class="workspace-notices">
          {live.readOnly && <p class="notice">The attempt is submitted: the session is read-only now.</p>}
          {live.state === "open" && !candidate && !live.readOnly && <p class="notice">The candidate is not in the workspace at the moment; their edits show here as they type.</p>}
          {sessionError && <ErrorBox message={sessionError} />}
        </div>
      )}
      <nav class="file-tree" aria-labelledby="files-title">
        <h2 id="files-title" class="pane-title">
          Files
        </h2>
        <FileTree
          files={files}
          active={active}
          unsaved={new Set()}
          onOpen={(path) => {
            setFollow(path === live.followed);
            setActive(path);
          }}
        />
      </nav>
      <section class="editor-area" aria-labelledby="editor-title">
        <div class="editor-bar">
          <h2 id="editor-title" class="pane-title mono">
            {active ?? "No file open"}
          </h2>
        </div>
        {!active && <p class="state">The candidate's open file shows here; or choose a file.</p>}
        {opened && !opened.ready && <Loading what={`Opening ${opened.path}`} />}
        <div class="editor" ref={editorHost} hidden={!opened?.ready} />
      </section>
      <section class="side" aria-label="Runs and notes">
        {showRuns || runsVersion > 0 ? (
          <RunsPanel key={runsVersion} attemptId={attemptId} canRun={false} prepare={async () => []} />
        ) : (
          <p>
            The candidate's test runs show here as they run.{" "}
            <button type="button" class="link" onClick={() => setShowRuns(true)}>
              Show the runs so far
            </button>
          </p>
        )}
        <NotesPanel notes={notes} canAdd={live.state === "open"} onAdd={(text) => session?.connection.send({ type: "note_add", text })} />
      </section>
      <div class="terminal-pane">
        <WatchedTerminal executionId={executionId} />
      </div>
    </div>
  );
}

function NotesPanel({ notes, canAdd, onAdd }: { notes: LiveNote[]; canAdd: boolean; onAdd: (text: string) => void }) {
  const [text, setText] = useState("");
  return (
    <section class="live-notes" aria-labelledby="notes-title">
      <h2 id="notes-title" class="pane-title">
        Notes
      </h2>
      <p class="muted small">Only staff see these notes; they show on the report.</p>
      {notes.length === 0 ? (
        <p class="muted">No notes yet.</p>
      ) : (
        <ul class="note-list">
          {notes.map((n) => (
            <li key={n.id}>
              <span class="muted small">
                {n.author.name}, {new Date(n.at).toLocaleTimeString()}
              </span>
              <p>{n.text}</p>
            </li>
          ))}
        </ul>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const note = text.trim();
          if (!note) return;
          onAdd(note);
          setText("");
        }}
      >
        <label for="note-text">A note (staff only)</label>
        <textarea id="note-text" rows={3} maxLength={LIVE_LIMITS.noteChars} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit" disabled={!canAdd || !text.trim()}>
          Add note
        </button>
      </form>
    </section>
  );
}
