// The diff of one file on the score report, drawn by @codemirror/merge: unified (the submitted
// version with the task's lines shown deleted above the changes) or side by side. Loaded only
// when a report page shows a diff, so neither the console's other pages nor the candidate's
// workspace download it. Read-only; each editor is focusable and labelled, so the keyboard and
// screen readers reach the text.
import { MergeView, unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, lineNumbers } from "@codemirror/view";

export type DiffLayout = "unified" | "split";

export interface DiffHandle {
  destroy(): void;
}

const COLLAPSE = { margin: 3, minSize: 6 };

// The workspace editor's contrast-checked colors.
const theme = EditorView.theme({
  "&": { fontSize: "13px", backgroundColor: "#ffffff", color: "#1b1f24" },
  ".cm-gutters": { backgroundColor: "#f4f6f8", color: "#4a5360", borderRight: "1px solid #d0d7de" },
  ".cm-collapsedLines": { color: "#1b1f24" },
});

function readOnly(label: string): Extension[] {
  return [
    theme,
    lineNumbers(),
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    EditorView.contentAttributes.of({ "aria-label": label, tabindex: "0" }),
  ];
}

/** Draws `base` against `submitted` into `parent`; `label` names the file for assistive technology. */
export function mountDiff(parent: HTMLElement, base: string, submitted: string, layout: DiffLayout, label: string): DiffHandle {
  if (layout === "split") {
    const view = new MergeView({
      a: { doc: base, extensions: readOnly(`${label}, the task's version`) },
      b: { doc: submitted, extensions: readOnly(`${label}, the submitted version`) },
      parent,
      collapseUnchanged: COLLAPSE,
      gutter: true,
    });
    return { destroy: () => view.destroy() };
  }
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: submitted,
      extensions: [
        ...readOnly(`${label}, the changes`),
        unifiedMergeView({ original: base, mergeControls: false, collapseUnchanged: COLLAPSE, syntaxHighlightDeletions: false }),
      ],
    }),
  });
  return { destroy: () => view.destroy() };
}
