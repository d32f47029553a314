// The attempt workspace: the file tree, the editor, the task, the tests, the assistant and the
// terminal, with saving that loses nothing (save-queue.ts). An attempt that is no longer in
// progress is shown read-only, as it was submitted.
import type { components } from "../../../client/src/index";
import { effect } from "@preact/signals";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, call } from "../lib/data";
import { ErrorBox, Loading } from "../components/states";
import { ApiError, describe } from "../lib/errors";
import { onNotification } from "../lib/notification-socket";
import { online } from "../lib/online";
import { attemptTelemetry, type AttemptTelemetry } from "./attempt-telemetry";
import { sessionBackend } from "./backend";
import { ChatPanel } from "./chat-panel";
import { Editors } from "./editors";
import { attemptKeystrokes } from "./keystroke-recorder";
import { base64ToText, textToBase64 } from "./encoding";
import { FileTree, type FileEntry } from "./file-tree";
import { pathProblem } from "./file-tree-model";
import { loadLanguage } from "./languages";
import { Markdown } from "./markdown-view";
import { RunsPanel } from "./runs-panel";
import { SaveQueue, type Change, type SaveSnapshot, type SaveStorage } from "./save-queue";
import { saveWords } from "./save-words";
import { ScorePanel } from "./score-panel";
import { SubmitDialog } from "./submit-dialog";
import { TerminalPanel } from "./terminal-panel";
import { TimeLeft } from "./time-left";
import { LiveStatus } from "../live/live-status";
import { useLiveSession } from "../live/use-live";

export type Attempt = components["schemas"]["Attempt"];
export type Task = components["schemas"]["Task"];
/** The attempt's page as one request gives it (`GET /attempts/{id}/workspace`). */
export type WorkspaceView = components["schemas"]["WorkspaceView"];

interface Props {
  attempt: Attempt;
  task: Task;
  /** The attempt's files as the page's view listed them. */
  listed: FileEntry[];
  /** The score report once scored, as the page's view brought it. */
  scoreReport: WorkspaceView["score_report"];
  onAttempt: (attempt: Attempt) => void;
  reload: () => void;
  /** The candidate has just submitted: the notice saying so takes the focus. */
  justSubmitted?: boolean;
}

type Opened =
  | { path: string; kind: "loading" }
  | { path: string; kind: "ready" }
  | { path: string; kind: "deleted" }
  | { path: string; kind: "unavailable"; message: string };

type Tab = "task" | "tests" | "assistant" | "score";

/** On a phone the panes are stacked, one at a time, behind tabs of their own. */
type Pane = "files" | "editor" | "side" | "terminal";

/** A phone's width: the header folds into a menu and the workspace shows one pane at a time (styles.css agrees). */
const PHONE = "(max-width: 599px)";

function usePhone(): boolean {
  const [phone, setPhone] = useState(() => window.matchMedia(PHONE).matches);
  useEffect(() => {
    const query = window.matchMedia(PHONE);
    const onChange = () => setPhone(query.matches);
    onChange();
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, []);
  return phone;
}

/** How long a run, a program or submitting waits for a dropped live session to take this browser's edits. */
const LIVE_SYNC_WAIT_MS = 10_000;

/** Focus to move once the page shows it: the editor (once it shows the open file), or an element by id. */
const EDITOR = Symbol("editor");

function browserStorage(): SaveStorage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

function sameSave(a: SaveSnapshot, b: SaveSnapshot): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Applies saved or restored changes to the file list: upserts mark files changed (or add them), deletions deleted. */
function applyChanges(files: FileEntry[], changes: Iterable<[string, Change]>): FileEntry[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  for (const [path, change] of changes) {
    const found = byPath.get(path);
    const deleted = change.op === "delete";
    byPath.set(path, found ? { ...found, changed: true, deleted } : { path, origin: "added", changed: true, deleted });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function firstFile(files: FileEntry[]): string | null {
  const live = files.filter((f) => !f.deleted);
  const pick =
    live.find((f) => f.changed) ?? live.find((f) => /^readme(\.md)?$/i.test(f.path)) ?? live.find((f) => !f.path.includes("/")) ?? live[0];
  return pick?.path ?? null;
}

export function Workspace({ attempt, task, listed, scoreReport, onAttempt, reload, justSubmitted = false }: Props) {
  const readOnly = attempt.status !== "IN_PROGRESS";
  const scored = attempt.scoring?.status === "scored";
  const attemptId = attempt.id;
  const [files, setFiles] = useState<FileEntry[] | null>(null);
  const [active, setActive] = useState<string | null>(null);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [save, setSave] = useState<SaveSnapshot>({ state: { kind: "saved" }, unsaved: [], stored: true });
  const [notice, setNotice] = useState<string>();
  // A scored attempt opens on its score: the bell's "Your score report is ready" leads here.
  const [tab, setTab] = useState<Tab>(scored ? "score" : "task");
  // A panel loads when its tab is first opened (fewer requests when the workspace opens), then stays.
  const [visited, setVisited] = useState<ReadonlySet<Tab>>(new Set([tab]));
  function openTab(next: Tab) {
    setTab(next);
    setVisited((v) => (v.has(next) ? v : new Set([...v, next])));
  }
  const [submitOpen, setSubmitOpen] = useState(false);
  const [submitBusy, setSubmitBusy] = useState(false);
  const [submitError, setSubmitError] = useState<string>();
  const [timeUp, setTimeUp] = useState(false);
  const [newFile, setNewFile] = useState<{ path: string; problem?: string } | null>(null);
  const phone = usePhone();
  const [pane, setPane] = useState<Pane>(scored ? "side" : "editor");
  const pendingFocus = useRef<typeof EDITOR | string | null>(null);
  const editorHost = useRef<HTMLDivElement>(null);
  const editors = useRef<Editors | null>(null);
  const filesRef = useRef<FileEntry[]>([]);
  filesRef.current = files ?? [];
  const activeRef = useRef<string | null>(null);
  activeRef.current = active;
  /** Files the API knows as files of the attempt (telemetry may name only those). */
  const known = useRef(new Set<string>());
  const telemetry = useRef<AttemptTelemetry | null>(null);
  const openedRef = useRef(opened);
  openedRef.current = opened;
  // A live session shares the files with staff; the server saves them from the shared document,
  // so the editor's edits do not go through the queue meanwhile (docs/web-app.md, "Live sessions").
  const live = useLiveSession(attemptId, task.live_sessions === true && !readOnly, (message) => {
    if (message.type === "read_only") reload();
    // What the session saved is changed in the tree, and a file the API knows (telemetry may name it).
    else if (message.type === "saved") {
      for (const path of message.paths) known.current.add(path);
      setFiles((f) => (f ? applyChanges(f, message.paths.map((path): [string, Change] => [path, { op: "upsert", content: "" }])) : f));
    }
    // A file the session cannot open (binary, too large) says why where it would show; other refusals as a notice.
    else if (message.type === "error") {
      const loading = openedRef.current?.kind === "loading" ? openedRef.current.path : null;
      if (loading) setOpened({ path: loading, kind: "unavailable", message: message.detail });
      else setNotice(message.detail);
    }
  });
  /** "off" (no session, or it was lost: the queue saves again), "loading" (its module or socket), "live". */
  const liveMode = live.state === "off" || live.state === "lost" ? "off" : live.session ? "live" : "loading";
  const liveRef = useRef(live.session);
  liveRef.current = liveMode === "live" ? live.session : null;

  const queue = useMemo(
    () =>
      new SaveQueue({
        attemptId,
        storage: browserStorage(),
        send: async (changes) => {
          const body: Record<string, { op: "upsert"; content_b64: string } | { op: "delete" }> = {};
          for (const [path, change] of Object.entries(changes)) body[path] = change.op === "delete" ? { op: "delete" } : { op: "upsert", content_b64: textToBase64(change.content) };
          await call(api.PATCH("/api/v1/attempts/{attempt_id}/changes", { params: { path: { attempt_id: attemptId } }, body: { changes: body } }));
        },
        online: () => online.value,
        // Every keystroke reports; the workspace renders again only when what it shows changes.
        onChange: (next) => setSave((prev) => (sameSave(prev, next) ? prev : next)),
        onSaved: (changes) => {
          for (const [path, change] of Object.entries(changes)) {
            if (change.op === "upsert") known.current.add(path);
            else known.current.delete(path);
          }
          setFiles((f) => (f ? applyChanges(f, Object.entries(changes)) : f));
        },
      }),
    [attemptId],
  );

  // The queue, the telemetry and the page's listeners live as long as the workspace.
  useEffect(() => {
    const restored = queue.restore();
    if (readOnly) {
      if (restored.size > 0) {
        setNotice(
          `${restored.size === 1 ? "One change" : `${restored.size} changes`} made in this browser had not been saved when the attempt was submitted, so ${restored.size === 1 ? "it is" : "they are"} not part of it.`,
        );
      }
      queue.discard();
      return () => queue.dispose();
    }
    if (restored.size > 0) {
      setNotice(`Restored ${restored.size === 1 ? "one change" : `${restored.size} changes`} this browser had kept from before; saving ${restored.size === 1 ? "it" : "them"} now.`);
      void queue.flush();
    }
    telemetry.current = attemptTelemetry(sessionBackend, attemptId);
    const stopOnline = effect(() => queue.setOnline(online.value));
    // Unsaved edits are in this browser's storage and saved on the next visit, so leaving is
    // asked about only when they have not reached the service for a while (offline, failing).
    const beforeUnload = (event: BeforeUnloadEvent) => {
      if (!queue.hasUnsaved()) return;
      const stuck = ["offline", "retrying", "failed"].includes(queue.snapshot().state.kind);
      void queue.flush();
      if (stuck) event.preventDefault();
    };
    window.addEventListener("beforeunload", beforeUnload);
    const stopNotifications = onNotification((n) => {
      if ((n.type === "attempt.auto_submitted" || n.type === "score_report.ready") && n.payload.attempt_id === attemptId) reload();
    });
    return () => {
      stopOnline();
      stopNotifications();
      window.removeEventListener("beforeunload", beforeUnload);
      telemetry.current?.dispose();
      telemetry.current = null;
      void queue.flush().finally(() => queue.dispose());
    };
  }, [queue]);

  // At the deadline the service submits the attempt; ask until it has, and the workspace turns read-only.
  useEffect(() => {
    if (!timeUp) return;
    const timer = setInterval(reload, 5000);
    return () => clearInterval(timer);
  }, [timeUp]);

  // A 409 from a save means the attempt was submitted meanwhile (the deadline, another tab).
  useEffect(() => {
    if (save.state.kind === "locked") reload();
  }, [save.state.kind]);

  // The files the page's view listed, with the edits this browser kept unsaved on top (restored
  // by the effect above, which runs first).
  useEffect(() => {
    known.current = new Set(listed.filter((f) => f.origin === "snapshot" || !f.deleted).map((f) => f.path));
    const pending: [string, Change][] = [];
    for (const path of queue.snapshot().unsaved) {
      const change = queue.unsavedChange(path);
      if (change) pending.push([path, change]);
    }
    const list = applyChanges(listed, pending);
    setFiles(list);
    setActive((a) => a ?? firstFile(list));
  }, [attemptId]);

  // One editor for the workspace; the task's grammar is downloaded beside it.
  useEffect(() => {
    const activity = telemetry.current?.activity(() => {
      const path = activeRef.current;
      return path ? { path, known: known.current.has(path) } : null;
    });
    const keystrokes = readOnly ? null : attemptKeystrokes(sessionBackend, attemptId);
    const created = new Editors(editorHost.current!, {
      readOnly,
      onChange: (path, text) => {
        if (!liveRef.current) queue.edit(path, { op: "upsert", content: text });
      },
      activity,
      recording: keystrokes?.extension,
    });
    editors.current = created;
    let alive = true;
    loadLanguage(task.language).then(
      (pack) => alive && created.setLanguage(pack),
      () => {},
    );
    return () => {
      alive = false;
      keystrokes?.dispose();
      created.destroy();
      editors.current = null;
    };
  }, []);

  useEffect(() => {
    if (!active) return;
    let alive = true;
    const editor = editors.current!;
    if (!readOnly) void queue.flush();
    const entry = filesRef.current.find((f) => f.path === active);
    const local = queue.unsavedChange(active);
    const show = (text: string) => {
      editor.show(active, text);
      setOpened({ path: active, kind: "ready" });
      if (known.current.has(active)) telemetry.current?.record({ kind: "file_opened", file_path: active });
    };
    const session = liveRef.current;
    if (local?.op === "delete" || (!local && entry?.deleted)) setOpened({ path: active, kind: "deleted" });
    else if (liveMode === "loading") setOpened({ path: active, kind: "loading" });
    else if (session) {
      setOpened({ path: active, kind: "loading" });
      session.showing(active);
      // Once a new file's save has landed: the server seeds the shared text from the saved files.
      void queue
        .flush()
        .then(() => session.bind(active))
        .then(({ text, extension }) => {
          if (!alive) return;
          editor.forget(active);
          editor.show(active, text, extension);
          setOpened({ path: active, kind: "ready" });
          if (known.current.has(active)) telemetry.current?.record({ kind: "file_opened", file_path: active });
        });
    } else if (local?.op === "upsert") show(local.content);
    else if (editor.text(active) !== undefined) show(editor.text(active)!);
    else {
      setOpened({ path: active, kind: "loading" });
      call(api.GET("/api/v1/attempts/{attempt_id}/files/content", { params: { path: { attempt_id: attemptId }, query: { path: active } } })).then(
        (file) => {
          if (!alive) return;
          const text = base64ToText(file.content_b64);
          if (text === null) setOpened({ path: active, kind: "unavailable", message: `${active} is a binary file (${file.size} bytes); the editor shows text files only.` });
          else show(text);
        },
        (error: unknown) => alive && setOpened({ path: active, kind: "unavailable", message: describe(error) }),
      );
    }
    return () => {
      alive = false;
    };
  }, [active, liveMode]);

  // Runs in the render that shows what is to be focused, before the next key press arrives, so no
  // typed key falls to the page's body.
  useLayoutEffect(() => {
    const want = pendingFocus.current;
    if (want === null) return;
    if (want === EDITOR) {
      if (opened?.kind !== "ready" || opened.path !== active) return;
      editors.current?.view.focus();
    } else document.getElementById(want)?.focus();
    pendingFocus.current = null;
  });

  function showPane(next: Pane, focusTab = false) {
    setPane(next);
    if (focusTab) pendingFocus.current = `pane-tab-${next}`;
  }

  function openFile(path: string) {
    setActive(path);
    // The file tree is hidden behind the editor's pane now; the focus goes to that pane's tab.
    if (phone) showPane("editor", true);
  }

  function createFile(event: Event) {
    event.preventDefault();
    if (!newFile) return;
    const path = newFile.path.trim();
    const problem = pathProblem(path) ?? (filesRef.current.some((f) => f.path === path && !f.deleted) ? `${path} exists already.` : null);
    if (problem) {
      setNewFile({ path: newFile.path, problem });
      return;
    }
    queue.edit(path, { op: "upsert", content: "" });
    editors.current?.forget(path);
    setFiles((f) => applyChanges(f ?? [], [[path, { op: "upsert", content: "" }]]));
    setNewFile(null);
    setActive(path);
    // Shown at once (the effect on `active` comes after the paint, and does not run again for the
    // same path), and focused in the same render: the keys typed next go into the new file. A live
    // session's file is shown by that effect, once bound to its shared text.
    if (!liveRef.current) {
      editors.current?.show(path, "");
      setOpened({ path, kind: "ready" });
    }
    if (phone) setPane("editor");
    pendingFocus.current = EDITOR;
  }

  /** Closes the new-file form; the focus goes back to its button. */
  function cancelNewFile() {
    setNewFile(null);
    pendingFocus.current = "new-file-button";
  }

  function deleteFile() {
    if (!active || !window.confirm(`Delete ${active} from your work? The deletion is saved like any change.`)) return;
    queue.edit(active, { op: "delete" });
    // From the deletion on, an event naming the file would be refused: the API knows it no more once the deletion is saved.
    known.current.delete(active);
    telemetry.current?.forgetFile(active);
    editors.current?.forget(active);
    setFiles((f) => applyChanges(f ?? [], [[active, { op: "delete" }]]));
    setOpened({ path: active, kind: "deleted" });
  }

  /** Saves everything; an error in words when something could not be saved, else null. */
  async function saveAll(): Promise<string | null> {
    if (!(await queue.flush())) return `your latest changes are not saved yet (${saveWords(queue.snapshot()).text}).`;
    // The server saves the shared files before a run, a program or a submit: it needs only to have the edits.
    if (liveRef.current && !(await liveRef.current.connection.whenSynced(LIVE_SYNC_WAIT_MS))) return "your latest edits have not reached the live session yet (reconnecting).";
    return null;
  }

  async function submit(explanation: string) {
    setSubmitBusy(true);
    setSubmitError(undefined);
    telemetry.current?.record({ kind: "submit_clicked" });
    const problem = await saveAll();
    if (problem) {
      setSubmitError(`Not submitted: ${problem} Submit once they are saved, so that they are part of your work.`);
      setSubmitBusy(false);
      return;
    }
    await telemetry.current?.flush();
    try {
      const submitted = await call(api.POST("/api/v1/attempts/{attempt_id}/submit", { params: { path: { attempt_id: attemptId } }, body: explanation ? { explanation } : {} }));
      setSubmitOpen(false);
      onAttempt(submitted);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) reload();
      setSubmitError(describe(error));
    } finally {
      setSubmitBusy(false);
    }
  }

  const unsaved = useMemo(() => new Set(save.unsaved), [save.unsaved]);
  const changedCount = (files ?? []).filter((f) => f.changed).length;
  const words = saveWords(save);
  const title = task.statement?.title ?? "Your assessment";
  const panes: [Pane, string][] = [
    ["files", "Files"],
    ["editor", "Editor"],
    ["side", task.ai_assistance ? "Task, tests, AI" : "Task & tests"],
    ...(readOnly ? [] : ([["terminal", "Terminal"]] as [Pane, string][])),
  ];
  /** On a phone, a pane is the tab panel of its tab, hidden while another is shown. */
  const paneOf = (id: Pane) => (phone ? { id: `pane-${id}`, role: "tabpanel" as const, "aria-labelledby": `pane-tab-${id}`, hidden: pane !== id } : {});

  const tree = (
    <>
      <h2 id="files-title" class="pane-title">
        Files
      </h2>
      {!files && <Loading what="Loading the files" />}
      {files && <FileTree files={files} active={active} unsaved={unsaved} onOpen={openFile} />}
      {!readOnly && files && (
        <div class="tree-actions">
          {newFile ? (
            <form onSubmit={createFile}>
              <label for="new-file-path">Path of the new file</label>
              <input
                id="new-file-path"
                value={newFile.path}
                onInput={(e) => setNewFile({ path: e.currentTarget.value })}
                aria-invalid={newFile.problem ? "true" : undefined}
                aria-describedby={newFile.problem ? "new-file-problem" : undefined}
                placeholder="src/helpers.js"
                onKeyDown={(e) => e.key === "Escape" && cancelNewFile()}
              />
              {newFile.problem && (
                <p id="new-file-problem" class="bad small">
                  {newFile.problem}
                </p>
              )}
              <div class="row">
                <button type="submit">Create</button>
                <button type="button" class="secondary" onClick={cancelNewFile}>
                  Cancel
                </button>
              </div>
            </form>
          ) : (
            <button
              type="button"
              class="secondary"
              id="new-file-button"
              onClick={() => {
                setNewFile({ path: "" });
                pendingFocus.current = "new-file-path";
              }}
            >
              New file
            </button>
          )}
        </div>
      )}
    </>
  );

  return (
    <div class={`workspace${readOnly ? " read-only" : ""}`}>
      <div class="toolbar">
        <h1>{title}</h1>
        {!readOnly && attempt.deadline_at && (
          <TimeLeft
            deadline={attempt.deadline_at}
            onNearlyUp={() => void queue.flush()}
            onUp={() => setTimeUp(true)}
          />
        )}
        {!readOnly && !attempt.deadline_at && <span class="muted">No time limit</span>}
        {!readOnly && (
          <p class={`save-state ${words.tone}`} role="status" aria-live="polite">
            {words.text}
            {!save.stored && " (this browser could not keep a copy)"}
          </p>
        )}
        {live.session && <LiveStatus view={live} />}
        {!readOnly && (
          <button type="button" class="submit-button" onClick={() => setSubmitOpen(true)}>
            Submit…
          </button>
        )}
      </div>
      {(timeUp || readOnly || notice) && (
        <div class="workspace-notices">
          {timeUp && !readOnly && (
            <p class="notice warn" role="alert">
              Time is up: the work you saved is being submitted automatically.
            </p>
          )}
          {readOnly && (
            <SubmittedNotice
              attempt={attempt}
              focus={justSubmitted}
              onShowScore={() => {
                openTab("score");
                setPane("side");
                pendingFocus.current = "tab-score";
              }}
            />
          )}
          {notice && (
            <p class="notice" role="status">
              {notice}
            </p>
          )}
        </div>
      )}

      {phone && <PaneTabs panes={panes} pane={pane} onPane={(next) => showPane(next, true)} />}

      {phone ? (
        <div class="file-tree" {...paneOf("files")}>
          {tree}
        </div>
      ) : (
        <nav class="file-tree" aria-labelledby="files-title">
          {tree}
        </nav>
      )}

      <section class="editor-area" aria-labelledby="editor-title" onFocusOut={() => !readOnly && void queue.flush()} {...paneOf("editor")}>
        <div class="editor-bar">
          <h2 id="editor-title" class="pane-title mono">
            {active ?? "No file open"}
          </h2>
          {!readOnly && active && opened?.kind === "ready" && (
            <button type="button" class="link" onClick={deleteFile}>
              Delete file
            </button>
          )}
          <span class="muted small">{readOnly ? "Read-only" : "Esc then Tab leaves the editor"}</span>
        </div>
        {opened?.kind === "loading" && <Loading what={`Opening ${opened.path}`} />}
        {opened?.kind === "unavailable" && <ErrorBox message={opened.message} />}
        {opened?.kind === "deleted" && <p class="state">{opened.path} is deleted in your work. To bring it back, create a file with the same path.</p>}
        {!active && files && <p class="state">Choose a file to open it.</p>}
        <div class="editor" ref={editorHost} hidden={opened?.kind !== "ready"} />
      </section>

      <section class="side" aria-label="Task, tests and assistant" {...paneOf("side")}>
        <Tabs tab={tab} onTab={openTab} assistant={task.ai_assistance} score={scored} />
        <div id="panel-task" role="tabpanel" aria-labelledby="tab-task" hidden={tab !== "task"} tabIndex={0}>
          <TaskInfo task={task} attempt={attempt} />
        </div>
        <div id="panel-tests" role="tabpanel" aria-labelledby="tab-tests" hidden={tab !== "tests"}>
          {visited.has("tests") && (
            <RunsPanel
              attemptId={attemptId}
              canRun={!readOnly}
              prepare={async () => {
                const problem = await saveAll();
                if (problem) throw new Error(`Not run: ${problem}`);
                // The live session's edits are saved by the server as the run starts: they are part of it.
                const changed = filesRef.current.filter((f) => f.changed).map((f) => f.path);
                return [...new Set([...changed, ...(liveRef.current?.editedPaths() ?? [])])];
              }}
              onStarted={(runId) => telemetry.current?.record({ kind: "run_clicked", run_id: runId })}
            />
          )}
        </div>
        {task.ai_assistance && (
          <div id="panel-assistant" role="tabpanel" aria-labelledby="tab-assistant" hidden={tab !== "assistant"}>
            {visited.has("assistant") && (
              <ChatPanel
                backend={sessionBackend}
                attemptId={attemptId}
                canSend={!readOnly}
                openFile={() => {
                  const path = activeRef.current;
                  const text = path ? editors.current?.text(path) : undefined;
                  return path && text !== undefined ? { path, content: text } : null;
                }}
                onSent={(chars) => telemetry.current?.record({ kind: "ai_chat_message_sent", message_chars: chars })}
              />
            )}
          </div>
        )}
        {scored && (
          <div id="panel-score" role="tabpanel" aria-labelledby="tab-score" hidden={tab !== "score"}>
            {visited.has("score") && <ScorePanel attemptId={attemptId} report={scoreReport} />}
          </div>
        )}
      </section>

      {!readOnly && (
        <div class="terminal-pane" {...paneOf("terminal")}>
          <TerminalPanel attemptId={attemptId} file={opened?.kind === "ready" ? active : null} beforeRun={saveAll} />
        </div>
      )}

      {!readOnly && (
        <SubmitDialog
          open={submitOpen}
          busy={submitBusy}
          error={submitError}
          holds={changedCount === 0 ? "no file changed from the task's code" : `${changedCount} changed ${changedCount === 1 ? "file" : "files"}`}
          onCancel={() => {
            setSubmitOpen(false);
            setSubmitError(undefined);
          }}
          onConfirm={(explanation) => void submit(explanation)}
        />
      )}
    </div>
  );
}

/** The phone's tabs over the workspace's panes: arrows, Home and End move between them, as in the side panel. */
function PaneTabs({ panes, pane, onPane }: { panes: [Pane, string][]; pane: Pane; onPane: (pane: Pane) => void }) {
  function onKeyDown(event: KeyboardEvent) {
    const index = panes.findIndex(([p]) => p === pane);
    const next = event.key === "ArrowRight" ? index + 1 : event.key === "ArrowLeft" ? index - 1 : event.key === "Home" ? 0 : event.key === "End" ? panes.length - 1 : null;
    if (next === null) return;
    event.preventDefault();
    onPane(panes[(next + panes.length) % panes.length]![0]);
  }
  return (
    <div class="tabs pane-tabs" role="tablist" aria-label="Workspace" onKeyDown={onKeyDown}>
      {panes.map(([id, label]) => (
        <button
          key={id}
          id={`pane-tab-${id}`}
          type="button"
          role="tab"
          aria-selected={pane === id}
          aria-controls={`pane-${id}`}
          tabIndex={pane === id ? 0 : -1}
          onClick={() => onPane(id)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

function Tabs({ tab, onTab, assistant, score }: { tab: Tab; onTab: (tab: Tab) => void; assistant: boolean; score: boolean }) {
  const tabs: [Tab, string][] = [
    ["task", "Task"],
    ["tests", "Tests"],
    ...(assistant ? ([["assistant", "AI assistant"]] as [Tab, string][]) : []),
    ...(score ? ([["score", "Your score"]] as [Tab, string][]) : []),
  ];
  function onKeyDown(event: KeyboardEvent) {
    const index = tabs.findIndex(([t]) => t === tab);
    const next = event.key === "ArrowRight" ? index + 1 : event.key === "ArrowLeft" ? index - 1 : event.key === "Home" ? 0 : event.key === "End" ? tabs.length - 1 : null;
    if (next === null) return;
    event.preventDefault();
    const target = tabs[(next + tabs.length) % tabs.length]![0];
    onTab(target);
    document.getElementById(`tab-${target}`)?.focus();
  }
  return (
    <div class="tabs" role="tablist" aria-label="Side panel" onKeyDown={onKeyDown}>
      {tabs.map(([id, label]) => (
        <button
          key={id}
          id={`tab-${id}`}
          type="button"
          role="tab"
          aria-selected={tab === id}
          aria-controls={`panel-${id}`}
          tabIndex={tab === id ? 0 : -1}
          onClick={() => onTab(id)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

export function TaskInfo({ task, attempt }: { task: Task; attempt?: Attempt }) {
  const limit = attempt?.time_limit_minutes ?? task.time_limit_minutes;
  return (
    <div class="task-info">
      <h2 class="pane-title">The task</h2>
      <dl class="facts">
        {task.language && (
          <>
            <dt>Language</dt>
            <dd>{task.language}</dd>
          </>
        )}
        <dt>Time limit</dt>
        <dd>{limit ? `${limit} minutes` : "None"}</dd>
        {task.test_command && (
          <>
            <dt>Tests run with</dt>
            <dd class="mono">{task.test_command.join(" ")}</dd>
          </>
        )}
        <dt>AI assistant</dt>
        <dd>{task.ai_assistance ? "Allowed" : "Not allowed in this task"}</dd>
      </dl>
      {task.statement ? <Markdown source={task.statement.body} headingBase={3} /> : <p class="muted">The task's statement is not written yet.</p>}
    </div>
  );
}

function SubmittedNotice({ attempt, focus, onShowScore }: { attempt: Attempt; focus: boolean; onShowScore: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focus) ref.current?.focus();
  }, []);
  const at = attempt.submitted_at ? new Date(attempt.submitted_at).toLocaleString() : null;
  const scoring = attempt.scoring?.status;
  if (attempt.status === "NOT_STARTED") return null;
  return (
    <div class="notice" ref={ref} tabIndex={-1}>
      <p>
        <strong>
          {attempt.auto_submitted ? "This attempt was submitted automatically when its time was up" : "You submitted this attempt"}
          {at ? ` on ${at}` : ""}.
        </strong>{" "}
        It is read-only now: the files shown are the work that is scored.
      </p>
      {scoring === "scoring" && <p class="muted">Scoring is under way.</p>}
      {scoring === "scored" && (
        <p>
          Scoring has finished.{" "}
          <button type="button" class="link" onClick={onShowScore}>
            See your score
          </button>
        </p>
      )}
      {scoring === "failed" && <p class="muted">Scoring could not finish{attempt.scoring?.reason ? `: ${attempt.scoring.reason}` : ""}. The organization's staff can score it again.</p>}
    </div>
  );
}
