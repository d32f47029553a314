// The task's language pack, downloaded when the workspace opens: one of five, never all. A pack
// gives the grammar of its files with the language's own completion sources, and the editing
// help every editable file gets (editor-help.ts: completion, bracket closing), which comes with
// it. A task in another language gets the editing help alone.
import type { LanguagePack } from "./language-pack";

export type { LanguagePack } from "./language-pack";

/** The pack's module for a task's language (`Task.language`), or null for a language with no grammar here. */
export function packFor(taskLanguage: string | null): "javascript" | "python" | "go" | "java" | "rust" | null {
  switch (taskLanguage?.toLowerCase()) {
    case "javascript":
    case "typescript":
      return "javascript";
    case "python":
    case "go":
    case "java":
    case "rust":
      return taskLanguage.toLowerCase() as "python" | "go" | "java" | "rust";
    default:
      return null;
  }
}

export async function loadLanguage(taskLanguage: string | null): Promise<LanguagePack> {
  // Each import names its module, so the build makes each pack a chunk of its own.
  switch (packFor(taskLanguage)) {
    case "javascript":
      return (await import("./languages/javascript")).pack;
    case "python":
      return (await import("./languages/python")).pack;
    case "go":
      return (await import("./languages/go")).pack;
    case "java":
      return (await import("./languages/java")).pack;
    case "rust":
      return (await import("./languages/rust")).pack;
    case null:
      return { support: () => null, editing: (await import("./editor-help")).editingHelp };
  }
}
