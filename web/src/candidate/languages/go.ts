import type { Language } from "@codemirror/language";
import { goLanguage } from "@codemirror/lang-go";

export function languageOf(path: string): Language | null {
  return /\.go$/i.test(path) ? goLanguage : null;
}
