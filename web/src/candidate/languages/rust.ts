import type { Language } from "@codemirror/language";
import { rustLanguage } from "@codemirror/lang-rust";

export function languageOf(path: string): Language | null {
  return /\.rs$/i.test(path) ? rustLanguage : null;
}
