// The JavaScript and TypeScript grammars, without the completion sources of javascript():
// a module of its own, so the dynamic import that loads it downloads only what is used.
import { javascriptLanguage, jsxLanguage, tsxLanguage, typescriptLanguage } from "@codemirror/lang-javascript";
import type { Language } from "@codemirror/language";

export function languageOf(path: string): Language | null {
  if (/\.(js|mjs|cjs)$/i.test(path)) return javascriptLanguage;
  if (/\.jsx$/i.test(path)) return jsxLanguage;
  if (/\.(ts|mts|cts)$/i.test(path)) return typescriptLanguage;
  if (/\.tsx$/i.test(path)) return tsxLanguage;
  return null;
}
