// Rust: the grammar; lang-rust has no completion source, so completion is the document's words.
import { rust } from "@codemirror/lang-rust";
import { editingHelp } from "../editor-help";
import type { LanguagePack } from "../language-pack";

const support = rust();

export const pack: LanguagePack = {
  support: (path) => (/\.rs$/i.test(path) ? support : null),
  editing: editingHelp,
};
