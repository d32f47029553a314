// The staff's file tree in a live session: the attempt's files as the page listed them, with what
// the session saved since (`saved`) marked changed, and a file the candidate created added.

/** A file of the tree, as candidate/file-tree.tsx's FileEntry (this module stays free of JSX, for its tests). */
export interface FileEntry {
  path: string;
  origin: "snapshot" | "added";
  changed: boolean;
  deleted: boolean;
}

/** The tree's files with `paths` saved: changed, and added when the list has no such file; sorted by path. */
export function withSaved(files: readonly FileEntry[], paths: readonly string[]): FileEntry[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  for (const path of paths) {
    const found = byPath.get(path);
    byPath.set(path, found ? { ...found, changed: true, deleted: false } : { path, origin: "added", changed: true, deleted: false });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
