// Python: the grammar with lang-python's completion sources (the names in scope, builtins and snippets).
import { python } from "@codemirror/lang-python";
import { editingHelp } from "../editor-help";
import type { LanguagePack } from "../language-pack";

const support = python();

export const pack: LanguagePack = {
  support: (path) => (/\.pyi?$/i.test(path) ? support : null),
  editing: editingHelp,
};
