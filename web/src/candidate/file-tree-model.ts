// The workspace's file tree as data: folders and files from a flat list of paths, the rows
// shown for the folders that are open, and what a key does there (the WAI-ARIA tree view
// pattern: arrows move and open or close, Home and End jump, Enter and Space act).
import { FILE_PATH_MAX_BYTES, filePathProblem, type FilePathProblem } from "../../../protocol/assessment-rules";

export interface TreeNode<F> {
  /** A file's path; a folder's path with a trailing "/". */
  id: string;
  name: string;
  kind: "dir" | "file";
  children: TreeNode<F>[];
  file?: F;
}

export interface TreeRow<F> {
  node: TreeNode<F>;
  depth: number;
  parent: string | null;
  /** 1-based position among its siblings, and their number (aria-posinset, aria-setsize). */
  position: number;
  siblings: number;
}

export function buildTree<F extends { path: string }>(files: F[]): TreeNode<F>[] {
  const root: TreeNode<F> = { id: "", name: "", kind: "dir", children: [] };
  const dirs = new Map<string, TreeNode<F>>([["", root]]);
  const dirOf = (path: string): TreeNode<F> => {
    const found = dirs.get(path);
    if (found) return found;
    const cut = path.lastIndexOf("/", path.length - 2);
    const parent = dirOf(cut === -1 ? "" : path.slice(0, cut + 1));
    const node: TreeNode<F> = { id: path, name: path.slice(cut + 1, -1), kind: "dir", children: [] };
    parent.children.push(node);
    dirs.set(path, node);
    return node;
  };
  for (const file of files) {
    const cut = file.path.lastIndexOf("/");
    dirOf(cut === -1 ? "" : file.path.slice(0, cut + 1)).children.push({ id: file.path, name: file.path.slice(cut + 1), kind: "file", children: [], file });
  }
  const sort = (nodes: TreeNode<F>[]) => {
    nodes.sort((a, b) => (a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind === "dir" ? -1 : 1));
    for (const n of nodes) sort(n.children);
  };
  sort(root.children);
  return root.children;
}

/** The folders containing `path`, outermost first, as tree ids. */
export function ancestors(path: string): string[] {
  const parts = path.split("/").slice(0, -1);
  return parts.map((_, i) => `${parts.slice(0, i + 1).join("/")}/`);
}

export function visibleRows<F>(nodes: TreeNode<F>[], expanded: ReadonlySet<string>, depth = 1, parent: string | null = null): TreeRow<F>[] {
  const rows: TreeRow<F>[] = [];
  nodes.forEach((node, index) => {
    rows.push({ node, depth, parent, position: index + 1, siblings: nodes.length });
    if (node.kind === "dir" && expanded.has(node.id)) rows.push(...visibleRows(node.children, expanded, depth + 1, node.id));
  });
  return rows;
}

export type TreeAction = { focus: string } | { expand: string } | { collapse: string } | { open: string } | null;

/** What `key` does on the row `current`, by the tree view pattern. */
export function treeKey<F>(rows: TreeRow<F>[], current: string, key: string, expanded: ReadonlySet<string>): TreeAction {
  const index = rows.findIndex((r) => r.node.id === current);
  const row = rows[index];
  if (!row) return rows[0] ? { focus: rows[0].node.id } : null;
  const isDir = row.node.kind === "dir";
  const open = isDir && expanded.has(row.node.id);
  switch (key) {
    case "ArrowDown":
      return rows[index + 1] ? { focus: rows[index + 1]!.node.id } : null;
    case "ArrowUp":
      return rows[index - 1] ? { focus: rows[index - 1]!.node.id } : null;
    case "Home":
      return { focus: rows[0]!.node.id };
    case "End":
      return { focus: rows[rows.length - 1]!.node.id };
    case "ArrowRight":
      if (!isDir) return null;
      if (!open) return { expand: row.node.id };
      return row.node.children[0] ? { focus: row.node.children[0].id } : null;
    case "ArrowLeft":
      if (open) return { collapse: row.node.id };
      return row.parent !== null ? { focus: row.parent } : null;
    case "Enter":
    case " ":
      if (isDir) return open ? { collapse: row.node.id } : { expand: row.node.id };
      return { open: row.node.id };
    default:
      return null;
  }
}

const PATH_PROBLEM_WORDS: Record<FilePathProblem, string> = {
  empty: "Give the file a path, such as src/helpers.js.",
  too_long: `The path is longer than ${FILE_PATH_MAX_BYTES} bytes.`,
  control_character: "The path has a control character.",
  backslash: "Use / between folders, not \\.",
  absolute: "The path starts at the repository's root: leave out the leading /.",
  empty_segment: "The path has an empty, . or .. part.",
  dot_dot_segment: "The path has an empty, . or .. part.",
  dot_segment: "The path has an empty, . or .. part.",
  git_directory: "Files inside .git cannot be changed.",
};

/** Why `path` cannot name a new file of the repository (the overlay's rule, protocol/assessment-rules.ts), in the app's words, or null. */
export function pathProblem(path: string): string | null {
  const problem = filePathProblem(path);
  if (problem === undefined) return null;
  if (problem === "empty_segment" && path.endsWith("/") && !path.startsWith("/")) return "The path names a folder; add the file's name.";
  return PATH_PROBLEM_WORDS[problem];
}
