// The workspace's code editor (CodeMirror 6): one view, one editor state per open file (so each
// keeps its undo history and selection), the task's language pack loaded on demand (its grammar,
// and in an editable editor completion and bracket closing: editor-help.ts), and the activity
// reviewers see as counts (typing, pastes, copies), never the text.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, HighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { Compartment, EditorState, type Extension, type Transaction } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers } from "@codemirror/view";
import { tags as t } from "@lezer/highlight";
import { utf8Length } from "./encoding";
import type { LanguagePack } from "./languages";
import { lineCount } from "./telemetry";

/** Colors with at least 4.5:1 contrast on the editor's white background. */
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword], color: "#7a1fa2" },
  { tag: [t.string, t.special(t.string), t.regexp, t.escape], color: "#a31515" },
  { tag: [t.comment, t.lineComment, t.blockComment, t.docComment], color: "#4f5b66", fontStyle: "italic" },
  { tag: [t.number, t.bool, t.null, t.atom], color: "#0b6a41" },
  { tag: [t.definition(t.variableName), t.function(t.variableName), t.function(t.definition(t.variableName))], color: "#0b4f9e" },
  { tag: [t.typeName, t.className, t.namespace], color: "#0f6674" },
  { tag: [t.propertyName, t.definition(t.propertyName)], color: "#1f3f8a" },
  { tag: [t.meta, t.annotation, t.processingInstruction], color: "#6b4e00" },
  { tag: t.invalid, color: "#b00020" },
  { tag: t.strong, fontWeight: "bold" },
  { tag: t.emphasis, fontStyle: "italic" },
  { tag: t.heading, fontWeight: "bold" },
]);

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "14px", backgroundColor: "#ffffff", color: "#1b1f24" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
  ".cm-gutters": { backgroundColor: "#f4f6f8", color: "#4a5360", borderRight: "1px solid #d0d7de" },
  ".cm-activeLineGutter": { backgroundColor: "#e3e8ee", color: "#1b1f24" },
  ".cm-activeLine": { backgroundColor: "#f3f7fc" },
  "&.cm-focused": { outline: "3px solid #0b5cad", outlineOffset: "-3px" },
  ".cm-selectionBackground, &.cm-focused .cm-selectionBackground": { backgroundColor: "#cfe0f5 !important" },
  ".cm-matchingBracket": { backgroundColor: "#dcebdc", outline: "1px solid #8fb98f" },
});

/** Activity of the editor as reviewers get it: what happened and how much, never the text. */
export interface EditorActivity {
  key(kind: "insert" | "delete"): void;
  paste(sizeBytes: number, lines: number, internal: boolean): void;
  copy(sizeBytes: number, lines: number): void;
}

export interface EditorsOptions {
  readOnly: boolean;
  onChange: (path: string, text: string) => void;
  activity?: EditorActivity;
  /** The keystroke recording's extension for a file's editor state (keystroke-recorder.ts). */
  recording?: (path: string) => Extension;
}

/** A short digest of copied text, to tell a paste of it from text copied elsewhere; the text is not kept. */
function digest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return `${text.length}:${(h >>> 0).toString(36)}`;
}

const INTERACTIVE_MARK = "assay:workspace-interactive";

export class Editors {
  readonly view: EditorView;
  private readonly states = new Map<string, EditorState>();
  private readonly language = new Compartment();
  private pack: LanguagePack | null = null;
  private current: string | null = null;
  private readonly copied = new Set<string>();

  constructor(
    parent: HTMLElement,
    private readonly options: EditorsOptions,
  ) {
    this.view = new EditorView({ parent, state: EditorState.create({ doc: "" }) });
  }

  /**
   * Shows `path`: its state as left, or a new one with `content`. `shared` binds a new state to a
   * live session's text (live/live-session.ts), whose undo history then keeps this user's edits only.
   */
  show(path: string, content: string, shared?: Extension): void {
    if (this.current !== null) this.states.set(this.current, this.view.state);
    this.current = path;
    this.view.setState(this.states.get(path) ?? this.create(path, content, shared));
    // The moment the workspace is usable: `npm run bench -- web` measures the time to it.
    if (performance.getEntriesByName(INTERACTIVE_MARK).length === 0) performance.mark(INTERACTIVE_MARK);
  }

  /** The text of an open file as edited, or undefined when it was never opened. */
  text(path: string): string | undefined {
    if (path === this.current) return this.view.state.doc.toString();
    return this.states.get(path)?.doc.toString();
  }

  /** Drops a file's editor state (a file deleted, or to be shown afresh). */
  forget(path: string): void {
    this.states.delete(path);
  }

  /**
   * Sets the task's language pack: the grammar for files of its language (a file of another
   * language stays plain), and in an editable editor completion and bracket closing in every file.
   */
  setLanguage(pack: LanguagePack): void {
    this.pack = pack;
    for (const [path, state] of this.states) this.states.set(path, state.update({ effects: this.language.reconfigure(this.grammar(path)) }).state);
    if (this.current !== null) this.view.dispatch({ effects: this.language.reconfigure(this.grammar(this.current)) });
  }

  destroy(): void {
    this.view.destroy();
  }

  private grammar(path: string): Extension {
    if (!this.pack) return [];
    return [this.pack.support(path) ?? [], this.options.readOnly ? [] : this.pack.editing];
  }

  private create(path: string, content: string, shared?: Extension): EditorState {
    const extensions: Extension[] = [
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightSpecialChars(),
      drawSelection(),
      highlightActiveLine(),
      syntaxHighlighting(highlight),
      theme,
      this.language.of(this.grammar(path)),
      // An explicit tab stop: read-only content is not editable, and checkers (axe) count a
      // scroller focusable only by its focusable content.
      EditorView.contentAttributes.of({ "aria-label": `Editor: ${path}`, tabindex: "0" }),
      EditorState.readOnly.of(this.options.readOnly),
      EditorView.editable.of(!this.options.readOnly),
    ];
    if (!this.options.readOnly) {
      extensions.push(
        shared ?? history(),
        indentOnInput(),
        bracketMatching(),
        keymap.of([...defaultKeymap, ...(shared ? [] : historyKeymap), indentWithTab]),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          for (const tr of update.transactions) this.observe(tr);
          this.options.onChange(path, update.state.doc.toString());
        }),
        EditorView.domEventHandlers({
          copy: (_event, view) => this.copiedFrom(view),
          cut: (_event, view) => this.copiedFrom(view),
        }),
        this.options.recording?.(path) ?? [],
      );
    } else extensions.push(keymap.of(defaultKeymap));
    return EditorState.create({ doc: content, extensions });
  }

  private observe(tr: Transaction): void {
    const activity = this.options.activity;
    if (!activity || !tr.docChanged) return;
    if (tr.isUserEvent("input.paste") || tr.isUserEvent("input.drop")) {
      let inserted = "";
      tr.changes.iterChanges((_fa, _ta, _fb, _tb, text) => (inserted += text.toString()));
      activity.paste(utf8Length(inserted), lineCount(inserted), this.copied.has(digest(inserted)));
    } else if (tr.isUserEvent("input")) activity.key("insert");
    else if (tr.isUserEvent("delete")) activity.key("delete");
  }

  private copiedFrom(view: EditorView): boolean {
    const text = view.state.selection.ranges.map((r) => view.state.sliceDoc(r.from, r.to)).join("\n");
    if (text) {
      this.copied.add(digest(text));
      this.options.activity?.copy(utf8Length(text), lineCount(text));
    }
    return false;
  }
}
