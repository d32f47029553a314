import { CompletionContext, insertBracket, type CompletionResult, type CompletionSource } from "@codemirror/autocomplete";
import { EditorState, type Extension } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import { documentWords, editingHelp } from "../../../web/src/candidate/editor-help";
import { loadLanguage, packFor, type LanguagePack } from "../../../web/src/candidate/languages";
import { dialectOf } from "../../../web/src/candidate/languages/javascript";

/** A file as the editable workspace editor holds it, with the cursor at its end. */
function fileState(pack: LanguagePack, path: string, doc: string): EditorState {
  const extensions: Extension[] = [pack.support(path) ?? [], pack.editing];
  return EditorState.create({ doc, selection: { anchor: doc.length }, extensions });
}

/** What the completion list would offer at the cursor, asked for explicitly (Ctrl+Space), from every source the file gets. */
async function offered(state: EditorState): Promise<{ labels: string[]; sources: number }> {
  const pos = state.selection.main.head;
  const sources = state.languageDataAt<CompletionSource>("autocomplete", pos);
  const labels = new Set<string>();
  for (const source of sources) {
    const result = (await source(new CompletionContext(state, pos, true))) as CompletionResult | null;
    const typed = state.sliceDoc(result?.from ?? pos, pos);
    for (const option of result?.options ?? []) if (option.label.startsWith(typed)) labels.add(option.label);
  }
  return { labels: [...labels], sources: sources.length };
}

describe("the editor's completion and bracket closing", () => {
  it("loads the pack of the task's language, TypeScript with JavaScript's; another language gets the help alone", async () => {
    expect(["JavaScript", "typescript", "python", "Go", "java", "rust", "ruby", null].map(packFor)).toEqual([
      "javascript", "javascript", "python", "go", "java", "rust", null, null,
    ]);
    const ruby = await loadLanguage("ruby");
    expect(ruby.support("main.rb")).toBeNull();
    expect(ruby.editing).toBe(editingHelp);
    for (const language of ["javascript", "python", "go", "java", "rust"]) expect((await loadLanguage(language)).editing).toBe(editingHelp);
  });

  it("JavaScript and TypeScript: keywords, the names declared in the file and its words", async () => {
    expect(["a.js", "b.mjs", "c.jsx", "d.ts", "e.tsx", "README.md"].map(dialectOf)).toEqual(["js", "js", "jsx", "ts", "tsx", null]);
    const js = await loadLanguage("javascript");
    const names = await offered(fileState(js, "src/slug.js", "function slugify(text) {\n  const maxLength = 10;\n  return ma"));
    expect(names.labels).toContain("maxLength");
    const keywords = await offered(fileState(js, "src/slug.ts", "const x = 1;\nfunc"));
    expect(keywords.labels).toContain("function");
    // Its own sources (keywords and snippets, the names in scope) and the document's words.
    expect(names.sources).toBe(3);
  });

  it("Python: the names in scope and builtins; Go: keywords and names", async () => {
    const py = await loadLanguage("python");
    expect((await offered(fileState(py, "calc.py", "def compute_total(items):\n    return 0\n\ncomp"))).labels).toContain("compute_total");
    expect((await offered(fileState(py, "calc.py", "pri"))).labels).toContain("print");
    const go = await loadLanguage("go");
    expect((await offered(fileState(go, "main.go", "package main\n\nfunc main() {\n  counterValue := 1\n  cou"))).labels).toContain("counterValue");
  });

  it("Java, Rust and files of no language: the document's words", async () => {
    const java = await loadLanguage("java");
    const words = await offered(fileState(java, "Main.java", "class Main { int counterValue = 1; }\ncou"));
    expect(words).toEqual({ labels: ["counterValue"], sources: 1 });
    const rust = await loadLanguage("rust");
    expect((await offered(fileState(rust, "notes.txt", "a fragment of text\nfra"))).labels).toEqual(["fragment"]);
  });

  it("a word the language also offers shows once, as the language has it", async () => {
    const result = documentWords(new CompletionContext(EditorState.create({ doc: "alpha beta al" , selection: { anchor: 13 } }), 13, false)) as CompletionResult;
    expect(result.options).toEqual([{ label: "alpha" }, { label: "beta" }]);
  });

  it("closes brackets and quotes in every language's files", async () => {
    for (const [language, path] of [["javascript", "a.js"], ["python", "a.py"], ["java", "A.java"], ["rust", "notes.md"]] as const) {
      const state = fileState(await loadLanguage(language), path, "call");
      const tr = insertBracket(state, "(");
      expect(tr?.state.doc.toString(), `${language} ${path}`).toBe("call()");
      expect(tr?.state.selection.main.head).toBe(5);
    }
  });
});
