// The workspace's save status in words. "Saving" only while a save is on its way: edits that
// wait for a pause in typing are not being saved yet, and saying so early misleads.
import type { SaveSnapshot } from "./save-queue";

export function saveWords(snapshot: SaveSnapshot): { text: string; tone: string } {
  const state = snapshot.state;
  switch (state.kind) {
    case "saved":
      return { text: "All changes saved", tone: "ok" };
    case "unsaved":
      return { text: "Unsaved changes: they are saved when you pause typing", tone: "" };
    case "saving":
      return { text: "Saving changes…", tone: "" };
    case "offline":
      return { text: "Offline: changes are kept in this browser and saved when the connection returns", tone: "warn" };
    case "retrying":
      return { text: `Not saved yet (${state.message}); trying again shortly`, tone: "warn" };
    case "failed":
      return { text: `Not saved: ${state.message}`, tone: "bad" };
    case "locked":
      return { text: `No more changes are taken: ${state.message}`, tone: "bad" };
  }
}
