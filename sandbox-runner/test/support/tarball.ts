import { gzipSync } from "node:zlib";

export type TarEntry =
  | { path: string; content: string | Buffer; mode?: number }
  | { path: string; dir: true }
  | { path: string; symlink: string }
  | { path: string; hardlink: string }
  | { path: string; type: "fifo" }
  | { path: string; declaredSize: number };

/**
 * Writes ustar archives byte by byte so tests can build entries no well-behaved archiver
 * would produce: `..` paths, absolute paths, links out of the tree, lying size headers.
 */
export function tarGz(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = "content" in e ? Buffer.from(e.content) : Buffer.alloc(0);
    const size = "declaredSize" in e ? e.declaredSize : body.length;
    const type = "dir" in e ? "5" : "symlink" in e ? "2" : "hardlink" in e ? "1" : "type" in e ? "6" : "0";
    const link = "symlink" in e ? e.symlink : "hardlink" in e ? e.hardlink : "";
    const mode = "mode" in e && e.mode !== undefined ? e.mode : "dir" in e ? 0o755 : 0o644;
    blocks.push(header(e.path, mode, size, type, link));
    if ("declaredSize" in e) {
      // A lying header: claims a huge body; the stream ends long before it.
      blocks.push(Buffer.alloc(512));
      continue;
    }
    blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

function header(path: string, mode: number, size: number, type: string, link: string): Buffer {
  const h = Buffer.alloc(512);
  let name = path;
  let prefix = "";
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf("/", 154);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
  }
  h.write(name, 0, 100);
  h.write(octal(mode, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(1_700_000_000, 12), 136);
  h.write("        ", 148);
  h.write(type, 156);
  h.write(link, 157, 100);
  h.write("ustar\u000000", 257);
  h.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148);
  return h;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\u0000`;
}

/** A GitHub-style snapshot: every file under one top-level folder. */
export function snapshot(files: Record<string, string>, top = "owner-repo-abc123"): Buffer {
  return tarGz([{ path: `${top}/`, dir: true }, ...Object.entries(files).map(([p, content]) => ({ path: `${top}/${p}`, content }))]);
}
