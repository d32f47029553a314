// Java: the grammar; lang-java has no completion source, so completion is the document's words.
import { java } from "@codemirror/lang-java";
import { editingHelp } from "../editor-help";
import type { LanguagePack } from "../language-pack";

const support = java();

export const pack: LanguagePack = {
  support: (path) => (/\.java$/i.test(path) ? support : null),
  editing: editingHelp,
};
