// The form for a task's or a draft's editable fields: the statement candidates read, the
// staff's title and notes, tags, time limit, visibility and AI assistance. Only changed fields
// are sent; while nothing is edited the form follows the record as it changes (an import
// filling in the statement), and once something is, it keeps the edits.
import { useEffect, useState } from "preact/hooks";
import { ErrorBox } from "../components/states";
import { describe } from "../lib/errors";
import { Outcome } from "./parts";
import { fieldsOf, patchOf, type TaskFields, type TaskFieldsPatch, type TaskFieldsSource } from "./task-fields";

interface Props {
  source: TaskFieldsSource;
  /** Sends the PATCH, shows its answer and returns it; throws the API's error. */
  onSave: (body: TaskFieldsPatch) => Promise<TaskFieldsSource>;
  /** Prefix of the inputs' ids, unique on the page. */
  id: string;
}

const same = (a: TaskFields, b: TaskFields) => JSON.stringify(a) === JSON.stringify(b);

export function TaskFieldsForm({ source, onSave, id }: Props) {
  const incoming = fieldsOf(source);
  const [base, setBase] = useState(incoming);
  const [edited, setEdited] = useState(incoming);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [outcome, setOutcome] = useState<string>();

  const key = JSON.stringify(incoming);
  useEffect(() => {
    if (same(edited, base)) setEdited(incoming);
    setBase(incoming);
  }, [key]);

  const set = <K extends keyof TaskFields>(field: K, value: TaskFields[K]) => {
    setEdited((e) => ({ ...e, [field]: value }));
    setOutcome(undefined);
  };

  const save = async (body: TaskFieldsPatch, done: string) => {
    setBusy(true);
    setError(undefined);
    setOutcome(undefined);
    try {
      const saved = fieldsOf(await onSave(body));
      setBase(saved);
      setEdited(saved);
      setOutcome(done);
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    const patch = patchOf(base, edited);
    if ("error" in patch) return setError(patch.error);
    if (Object.keys(patch.body).length === 0) return setOutcome("Nothing has changed.");
    void save(patch.body, "Saved.");
  };

  const hint = (field: keyof TaskFields, words: string) => (
    <p class="hint" id={`${id}-${field}-hint`}>
      {words}
    </p>
  );

  const text = (field: "title" | "statementTitle" | "tags", label: string, words?: string) => (
    <div class="field">
      <label for={`${id}-${field}`}>{label}</label>
      <input
        id={`${id}-${field}`}
        type="text"
        value={edited[field]}
        aria-describedby={words ? `${id}-${field}-hint` : undefined}
        onInput={(e) => set(field, e.currentTarget.value)}
      />
      {words && hint(field, words)}
    </div>
  );

  return (
    <form class="task-fields" onSubmit={submit}>
      <fieldset>
        <legend>What candidates read</legend>
        {text("statementTitle", "Statement title")}
        <div class="field">
          <label for={`${id}-statementBody`}>Statement (Markdown)</label>
          <textarea id={`${id}-statementBody`} rows={12} value={edited.statementBody} onInput={(e) => set("statementBody", e.currentTarget.value)} />
        </div>
        <button type="button" class="secondary" disabled={busy} onClick={() => void save({ statement: null }, "The statement is the default again.")}>
          Use the default statement
        </button>
      </fieldset>
      <fieldset>
        <legend>For staff</legend>
        {text("title", "Title", "The organization's own name for the task; candidates never see it.")}
        <div class="field">
          <label for={`${id}-description`}>Notes</label>
          <textarea id={`${id}-description`} rows={3} value={edited.description} onInput={(e) => set("description", e.currentTarget.value)} />
        </div>
        {text("tags", "Tags", "Separated by commas.")}
        <div class="field">
          <label for={`${id}-timeLimit`}>Time limit (minutes)</label>
          <input
            id={`${id}-timeLimit`}
            type="number"
            min={5}
            max={1440}
            step={1}
            value={edited.timeLimit}
            aria-describedby={`${id}-timeLimit-hint`}
            onInput={(e) => set("timeLimit", e.currentTarget.value)}
          />
          {hint("timeLimit", "5 to 1440, or empty for no limit.")}
        </div>
        <div class="field">
          <label for={`${id}-visibility`}>Visibility</label>
          <select id={`${id}-visibility`} value={edited.visibility} onChange={(e) => set("visibility", e.currentTarget.value as TaskFields["visibility"])}>
            <option value="PRIVATE_ORG">Private: the organization and invited candidates</option>
            <option value="PUBLIC">Public: every signed-in user, once ready</option>
          </select>
        </div>
        <div class="check">
          <input id={`${id}-ai`} type="checkbox" checked={edited.aiAssistance} onChange={(e) => set("aiAssistance", e.currentTarget.checked)} />
          <label for={`${id}-ai`}>Candidates may use the AI assistant</label>
        </div>
        {source.live_sessions !== undefined && (
          <div class="check">
            <input id={`${id}-live`} type="checkbox" checked={edited.liveSessions} onChange={(e) => set("liveSessions", e.currentTarget.checked)} />
            <label for={`${id}-live`}>Staff may join a candidate's attempt live</label>
          </div>
        )}
      </fieldset>
      {error && <ErrorBox message={error} />}
      <div class="row">
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : "Save changes"}
        </button>
        <Outcome message={outcome} />
      </div>
    </form>
  );
}
