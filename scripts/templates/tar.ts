/**
 * A deterministic ustar writer: the same files give the same bytes on any machine, because
 * every entry has a fixed time, owner and mode and entries are sorted by path.
 */

const BLOCK = 512;
/** 2024-01-01T00:00:00Z, the date the dev repo host's builder gives its commits. */
const MTIME = 1_704_067_200;

export interface TarFile {
  /** Relative path with "/" separators, ASCII only. */
  path: string;
  content: Uint8Array;
  executable?: boolean;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

/** ustar keeps names up to 100 bytes, and up to 255 when cut at a "/" into prefix and name. */
function splitName(path: string): { prefix: string; name: string } {
  if (path.length <= 100) return { prefix: "", name: path };
  for (let cut = path.indexOf("/"); cut !== -1; cut = path.indexOf("/", cut + 1)) {
    if (cut <= 155 && path.length - cut - 1 <= 100) return { prefix: path.slice(0, cut), name: path.slice(cut + 1) };
  }
  throw new Error(`tar: path too long for ustar: ${path}`);
}

function header(path: string, type: "0" | "5", mode: number, size: number): Uint8Array {
  if (!/^[\x20-\x7e]+$/.test(path)) throw new Error(`tar: only printable ASCII paths are written: ${JSON.stringify(path)}`);
  const block = new Uint8Array(BLOCK);
  const put = (offset: number, text: string) => block.set(new TextEncoder().encode(text), offset);
  const { prefix, name } = splitName(path);
  put(0, name);
  put(100, octal(mode, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(MTIME, 12));
  put(148, "        ");
  put(156, type);
  put(257, "ustar\0");
  put(263, "00");
  put(345, prefix);
  const sum = block.reduce((total, byte) => total + byte, 0);
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

/**
 * The tar archive of `files` under one top-level `folder`, with an entry for every directory,
 * ending in the two zero blocks.
 */
export function writeTar(folder: string, files: TarFile[]): Uint8Array<ArrayBuffer> {
  // Directories map to null.
  const entries = new Map<string, TarFile | null>([[`${folder}/`, null]]);
  for (const file of files) {
    const parts = file.path.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) throw new Error(`tar: not a relative path: ${file.path}`);
    for (let i = 1; i < parts.length; i += 1) entries.set(`${folder}/${parts.slice(0, i).join("/")}/`, null);
    entries.set(`${folder}/${file.path}`, file);
  }
  const chunks: Uint8Array[] = [];
  for (const [path, file] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (file === null) {
      chunks.push(header(path, "5", 0o755, 0));
      continue;
    }
    chunks.push(header(path, "0", file.executable ? 0o755 : 0o644, file.content.length));
    chunks.push(file.content);
    const padding = (BLOCK - (file.content.length % BLOCK)) % BLOCK;
    if (padding) chunks.push(new Uint8Array(padding));
  }
  chunks.push(new Uint8Array(2 * BLOCK));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
