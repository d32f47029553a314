/**
 * Reads chosen regular files out of a tar stream (ustar with pax extended headers, as git
 * archive writes them for GitHub's tarballs), without a file system: the Worker has none.
 */

const BLOCK = 512;

/** Exact-size reads over a stream of chunks of any size. */
class ByteReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  consumed = 0;

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  private async pull(): Promise<boolean> {
    const { done, value } = await this.reader.read();
    if (done) return false;
    this.chunks.push(value);
    this.buffered += value.length;
    return true;
  }

  /** The next n bytes, or null at the end of the stream. */
  async take(n: number): Promise<Uint8Array | null> {
    while (this.buffered < n) if (!(await this.pull())) return null;
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const chunk = this.chunks[0] as Uint8Array;
      const k = Math.min(chunk.length, n - at);
      out.set(chunk.subarray(0, k), at);
      at += k;
      if (k === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(k);
    }
    this.buffered -= n;
    this.consumed += n;
    return out;
  }

  /** Drops n bytes without keeping them; false at the end of the stream. */
  async skip(n: number): Promise<boolean> {
    let left = n;
    while (left > 0) {
      if (this.buffered === 0 && !(await this.pull())) return false;
      const chunk = this.chunks[0] as Uint8Array;
      const k = Math.min(chunk.length, left);
      if (k === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(k);
      this.buffered -= k;
      left -= k;
    }
    this.consumed += n;
    return true;
  }
}

const decoder = new TextDecoder();

function text(block: Uint8Array, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return decoder.decode(end === -1 ? field : field.subarray(0, end));
}

/** Numeric fields are octal text, or base-256 when the first byte's high bit is set (large sizes). */
function numeric(block: Uint8Array, start: number, length: number): number {
  const field = block.subarray(start, start + length);
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let value = (field[0] ?? 0) & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const digits = text(block, start, length).trim();
  if (!/^[0-7]*$/.test(digits)) throw new Error(`tar: bad numeric field "${digits}"`);
  return digits === "" ? 0 : parseInt(digits, 8);
}

/** pax records: "<length> <key>=<value>\n", the length counting the record's bytes. */
function paxRecords(data: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number(decoder.decode(data.subarray(at, space)));
    if (!Number.isInteger(length) || length <= space - at) break;
    const body = decoder.decode(data.subarray(space + 1, at + length)).replace(/\n$/, "");
    const eq = body.indexOf("=");
    if (eq > 0) records.set(body.slice(0, eq), body.slice(eq + 1));
    at += length;
  }
  return records;
}

export interface TarReadOptions {
  /** Leading path components to drop, as GitHub's tarballs have one top-level folder. */
  stripComponents: number;
  /** Bound on the bytes of the wanted files together. */
  maxFileBytes: number;
  /** Bound on the uncompressed tar stream read, against archives that expand without end. */
  maxStreamBytes: number;
}

export class TarLimitError extends Error {}

/** What to do with a regular file met in the archive: read its bytes, pass it by, or stop reading. */
type TarVisit = "read" | "skip" | "stop";

/**
 * Walks an archive's regular files (paths after `stripComponents`), asking `visit` what to do
 * with each; `read` ones are handed to `take` with their bytes, within `maxFileBytes` together.
 */
async function walkTar(
  stream: ReadableStream<Uint8Array>,
  options: TarReadOptions,
  visit: (path: string) => TarVisit,
  take: (path: string, data: Uint8Array) => void,
): Promise<void> {
  const reader = stream.getReader();
  const bytes = new ByteReader(reader);
  let fileBytes = 0;
  let pax = new Map<string, string>();
  try {
    for (;;) {
      if (bytes.consumed > options.maxStreamBytes) throw new TarLimitError(`the archive is larger than ${options.maxStreamBytes} bytes`);
      const header = await bytes.take(BLOCK);
      if (header === null || header.every((b) => b === 0)) break;
      const type = String.fromCharCode(header[156] ?? 0);
      const size = pax.has("size") ? Number(pax.get("size")) : numeric(header, 124, 12);
      const padded = Math.ceil(size / BLOCK) * BLOCK;

      if (type === "x" || type === "g") {
        if (size > 1024 * 1024) throw new Error("tar: extended header too large");
        const data = await bytes.take(padded);
        if (data === null) break;
        // A global header (git archive's commit id) names no file; "x" applies to the next entry.
        if (type === "x") pax = paxRecords(data.subarray(0, size));
        continue;
      }

      const prefix = text(header, 345, 155);
      const name = pax.get("path") ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
      pax = new Map();
      const path = name.split("/").slice(options.stripComponents).join("/");
      const regular = type === "0" || type === "\0";
      const action = regular && path !== "" ? visit(path) : "skip";
      if (action === "stop") break;
      if (action === "read") {
        fileBytes += size;
        if (fileBytes > options.maxFileBytes) throw new TarLimitError(`the files asked for are larger than ${options.maxFileBytes} bytes`);
        const data = await bytes.take(padded);
        if (data === null) break;
        take(path, data.slice(0, size));
      } else {
        if (bytes.consumed + padded > options.maxStreamBytes) throw new TarLimitError(`the archive is larger than ${options.maxStreamBytes} bytes`);
        if (!(await bytes.skip(padded))) break;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Reads the wanted regular files; stops reading as soon as all are found. */
export async function readTarFiles(stream: ReadableStream<Uint8Array>, wanted: ReadonlySet<string>, options: TarReadOptions): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  if (wanted.size === 0) return found;
  await walkTar(
    stream,
    options,
    (path) => (found.size >= wanted.size ? "stop" : wanted.has(path) && !found.has(path) ? "read" : "skip"),
    (path, data) => {
      found.set(path, data);
    },
  );
  return found;
}

/** The paths of an archive's regular files, reading none of their bytes; at most `maxFiles` of them. */
export async function listTarFiles(stream: ReadableStream<Uint8Array>, options: TarReadOptions & { maxFiles: number }): Promise<string[]> {
  const paths: string[] = [];
  await walkTar(
    stream,
    options,
    (path) => {
      if (paths.length >= options.maxFiles) throw new TarLimitError(`the archive has more than ${options.maxFiles} files`);
      paths.push(path);
      return "skip";
    },
    () => undefined,
  );
  return paths;
}
