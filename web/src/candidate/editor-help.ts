// What an editable editor adds to typing once the task's language pack is there (it is
// downloaded with the pack, never before): completion as you type, from the language's own
// sources (its pack's LanguageSupport: keywords, snippets, the names declared in the file) and
// from the words of the document, and bracket closing (`(` gives `()`, Backspace between the
// two removes both, typing `)` steps over the closing one).
import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completeAnyWord,
  type CompletionResult,
  type CompletionSource,
} from "@codemirror/autocomplete";
import { EditorState, Prec, type Extension } from "@codemirror/state";
import { keymap } from "@codemirror/view";

/**
 * The document's words, in every file and language. They come without a type, so a word that a
 * language's source also offers (a variable, a keyword) shows once, as that source has it: the
 * completion list merges equal labels when at most one of them is typed.
 */
export const documentWords: CompletionSource = (context) => {
  const result = completeAnyWord(context) as CompletionResult | null;
  return result && { ...result, options: result.options.map(({ label }) => ({ label })) };
};

/** Completion (the language's sources and the document's words) and bracket closing. */
export const editingHelp: Extension = [
  // Its keymap (arrows, Enter to accept, Escape to close, Ctrl+Space to ask) comes with it, ahead of the editor's.
  autocompletion(),
  EditorState.languageData.of(() => [{ autocomplete: documentWords }]),
  closeBrackets(),
  // Backspace between a pair removes both: ahead of the default keymap's Backspace.
  Prec.high(keymap.of(closeBracketsKeymap)),
];
