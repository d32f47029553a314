// JavaScript and TypeScript (with JSX): the grammars with lang-javascript's completion sources
// (keywords and snippets, the names declared in scope) and, in JSX, closing tags.
import { javascript } from "@codemirror/lang-javascript";
import type { LanguageSupport } from "@codemirror/language";
import { editingHelp } from "../editor-help";
import type { LanguagePack } from "../language-pack";

const dialects = {
  js: javascript(),
  jsx: javascript({ jsx: true }),
  ts: javascript({ typescript: true }),
  tsx: javascript({ jsx: true, typescript: true }),
};

export function dialectOf(path: string): keyof typeof dialects | null {
  if (/\.(js|mjs|cjs)$/i.test(path)) return "js";
  if (/\.jsx$/i.test(path)) return "jsx";
  if (/\.(ts|mts|cts)$/i.test(path)) return "ts";
  if (/\.tsx$/i.test(path)) return "tsx";
  return null;
}

export const pack: LanguagePack = {
  support(path): LanguageSupport | null {
    const dialect = dialectOf(path);
    return dialect && dialects[dialect];
  },
  editing: editingHelp,
};
