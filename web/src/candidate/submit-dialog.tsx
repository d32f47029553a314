// The confirmation before submitting: what is final, and what is scored. A modal <dialog>, so
// focus stays in it, Escape cancels, and the page behind is inert while it is open.
import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorBox } from "../components/states";

interface Props {
  open: boolean;
  busy: boolean;
  error: string | undefined;
  /** What the submission holds, in words: "3 changed files", or how an IDE submits. */
  holds: string;
  onCancel: () => void;
  onConfirm: (explanation: string) => void;
}

export function SubmitDialog({ open, busy, error, holds, onCancel, onConfirm }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const [explanation, setExplanation] = useState("");

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      class="submit-dialog"
      aria-labelledby="submit-title"
      aria-describedby="submit-what"
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          onConfirm(explanation.trim());
        }}
      >
        <h2 id="submit-title">Submit your work?</h2>
        <div id="submit-what">
          <p>
            <strong>Submitting is final.</strong> Afterwards you can no longer edit files, save changes or run tests in this attempt.
          </p>
          <p>What is scored is the files as saved in this workspace: {holds}. Unsaved edits are saved first.</p>
        </div>
        <label for="submit-explanation">Your account of the work (optional)</label>
        <textarea
          id="submit-explanation"
          rows={5}
          maxLength={10_000}
          value={explanation}
          onInput={(e) => setExplanation(e.currentTarget.value)}
          aria-describedby="submit-explanation-hint"
        />
        <p id="submit-explanation-hint" class="muted small">
          What you changed, why, and how you tested it. Reviewers read it, and it counts towards the communication score.
        </p>
        {error && <ErrorBox message={error} />}
        <div class="row">
          <button type="submit" disabled={busy}>
            {busy ? "Submitting…" : "Submit, final"}
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={onCancel}>
            Keep working
          </button>
        </div>
      </form>
    </dialog>
  );
}
