// The live session in the toolbar: who else is there ("Interviewer Ada is here, in
// src/slugify.js."), when the server last saved the shared files, and the connection when it is
// not simply live. Announced politely.
import { liveStateWords, type LiveView } from "./use-live";

export function LiveStatus({ view }: { view: LiveView }) {
  const state = view.state === "open" ? null : liveStateWords(view);
  const tone = view.state === "lost" ? "bad" : view.state === "open" ? "ok" : "warn";
  return (
    <p class={`live-status save-state ${tone}`} role="status" aria-live="polite">
      <span class="badge">Live</span> {view.presence || (view.state === "open" ? "No one else is here." : "")}
      {state && ` ${state}`}
      {view.savedAt && <span class="muted small"> Edits saved {new Date(view.savedAt).toLocaleTimeString()}.</span>}
    </p>
  );
}
