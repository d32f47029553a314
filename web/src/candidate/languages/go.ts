// Go: the grammar with lang-go's completion sources (keywords and snippets, the names in scope).
import { go } from "@codemirror/lang-go";
import { editingHelp } from "../editor-help";
import type { LanguagePack } from "../language-pack";

const support = go();

export const pack: LanguagePack = {
  support: (path) => (/\.go$/i.test(path) ? support : null),
  editing: editingHelp,
};
