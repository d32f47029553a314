// The workspace's files as a tree view (role="tree"): one tab stop, arrows to move, Right and
// Left to open and close folders, Enter to open a file. Each file says whether it is changed,
// added, deleted or not yet saved, in words as well as marks.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ancestors, buildTree, treeKey, visibleRows, type TreeRow } from "./file-tree-model";

export interface FileEntry {
  path: string;
  origin: "snapshot" | "added";
  changed: boolean;
  deleted: boolean;
}

interface Props {
  files: FileEntry[];
  active: string | null;
  unsaved: ReadonlySet<string>;
  onOpen: (path: string) => void;
}

function describeFile(file: FileEntry, unsaved: boolean): string {
  const parts: string[] = [];
  if (file.deleted) parts.push("deleted");
  else if (file.origin === "added") parts.push("added");
  else if (file.changed) parts.push("changed");
  if (unsaved) parts.push("not saved yet");
  return parts.join(", ");
}

export function FileTree({ files, active, unsaved, onOpen }: Props) {
  const tree = useMemo(() => buildTree(files), [files]);
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set(active ? ancestors(active) : []));
  const [focused, setFocused] = useState<string | null>(active);
  const list = useRef<HTMLUListElement>(null);
  const moved = useRef(false);

  useEffect(() => {
    if (!active) return;
    setExpanded((e) => {
      const wanted = ancestors(active).filter((a) => !e.has(a));
      return wanted.length ? new Set([...e, ...wanted]) : e;
    });
    setFocused(active);
  }, [active]);

  const rows = visibleRows(tree, expanded);
  const current = rows.some((r) => r.node.id === focused) ? focused : (rows[0]?.node.id ?? null);

  useEffect(() => {
    if (!moved.current) return;
    moved.current = false;
    list.current?.querySelector<HTMLElement>('[tabindex="0"]')?.focus();
  }, [current, expanded]);

  function onKeyDown(event: KeyboardEvent) {
    if (current === null) return;
    const action = treeKey(rows, current, event.key, expanded);
    if (!action) return;
    event.preventDefault();
    moved.current = true;
    if ("focus" in action) setFocused(action.focus);
    else if ("expand" in action) setExpanded(new Set([...expanded, action.expand]));
    else if ("collapse" in action) {
      const next = new Set(expanded);
      next.delete(action.collapse);
      setExpanded(next);
    } else onOpen(action.open);
  }

  function toggle(row: TreeRow<FileEntry>) {
    const next = new Set(expanded);
    if (next.has(row.node.id)) next.delete(row.node.id);
    else next.add(row.node.id);
    setExpanded(next);
    setFocused(row.node.id);
  }

  if (files.length === 0) return <p class="muted">No files.</p>;

  return (
    <ul class="tree" role="tree" aria-label="Files" ref={list} onKeyDown={onKeyDown}>
      {rows.map((row) => {
        const { node } = row;
        const isDir = node.kind === "dir";
        const file = node.file;
        const status = file ? describeFile(file, unsaved.has(file.path)) : "";
        return (
          <li
            key={node.id}
            role="treeitem"
            aria-level={row.depth}
            aria-posinset={row.position}
            aria-setsize={row.siblings}
            aria-expanded={isDir ? expanded.has(node.id) : undefined}
            aria-selected={isDir ? undefined : node.id === active}
            tabIndex={node.id === current ? 0 : -1}
            class={`tree-row${node.id === active ? " active" : ""}${file?.deleted ? " deleted" : ""}`}
            style={{ paddingLeft: `${(row.depth - 1) * 0.9 + 0.25}rem` }}
            onClick={() => (isDir ? toggle(row) : onOpen(node.id))}
            onFocus={() => setFocused(node.id)}
          >
            <span aria-hidden="true" class="tree-mark">
              {isDir ? (expanded.has(node.id) ? "▾" : "▸") : ""}
            </span>
            {node.name}
            {status && <span class="tree-status"> ({status})</span>}
          </li>
        );
      })}
    </ul>
  );
}
