// What a language pack gives the editor, in a module of its own: the packs (languages/) and
// their loader (languages.ts) both name it, and neither may import the other.
import type { Extension } from "@codemirror/state";

export interface LanguagePack {
  /** The grammar and the language's completion sources for a file of the language; null for another file (plain text). */
  support(path: string): Extension | null;
  /** Completion and bracket closing, for every file an editable editor shows. */
  editing: Extension;
}
