import type { Language } from "@codemirror/language";
import { javaLanguage } from "@codemirror/lang-java";

export function languageOf(path: string): Language | null {
  return /\.java$/i.test(path) ? javaLanguage : null;
}
