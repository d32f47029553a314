import type { Language } from "@codemirror/language";
import { pythonLanguage } from "@codemirror/lang-python";

export function languageOf(path: string): Language | null {
  return /\.pyi?$/i.test(path) ? pythonLanguage : null;
}
