/**
 * Completes the two patches with the files a diff carries no content for (binary files, and
 * text that is not UTF-8), as git's own binary patches: "GIT binary patch" with a literal of
 * the file at head. `git apply` checks such a patch against full object ids on the index
 * line, so the ids are computed here from the contents rather than taken from the diff,
 * which may abbreviate them.
 */
import type { BinaryFile, PatchSplit } from "./patch-split";
import { PR_LIMITS } from "./patch-split";
import type { ParseResult } from "./pr-url";
import { toHex } from "../lib/digest";

export interface BinaryContents {
  /** Contents at the base commit, by path at base. */
  base: ReadonlyMap<string, Uint8Array>;
  /** Contents at the head commit, by path at head. */
  head: ReadonlyMap<string, Uint8Array>;
}

/** Which files to read at base and at head to complete the patches. */
export function binaryContentPaths(files: BinaryFile[]): { base: string[]; head: string[] } {
  return {
    base: files.filter((f) => f.status !== "added").map((f) => f.previousPath ?? f.path),
    head: files.filter((f) => f.status !== "removed").map((f) => f.path),
  };
}

const NULL_ID = "0".repeat(40);

/** git's object id of a blob (SHA-1 repositories, which is what GitHub hosts). */
async function blobId(content: Uint8Array): Promise<string> {
  const header = new TextEncoder().encode(`blob ${content.length}\0`);
  const object = new Uint8Array(header.length + content.length);
  object.set(header);
  object.set(content, header.length);
  return toHex(await crypto.subtle.digest("SHA-1", object));
}

/**
 * A zlib stream of stored (uncompressed) deflate blocks: valid input for git's inflate,
 * and simple enough to write without a compression library in either runtime.
 */
function zlibStored(data: Uint8Array): Uint8Array {
  const BLOCK = 65535;
  const blocks = Math.max(1, Math.ceil(data.length / BLOCK));
  const out = new Uint8Array(2 + blocks * 5 + data.length + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  let at = 2;
  for (let b = 0; b < blocks; b += 1) {
    const chunk = data.subarray(b * BLOCK, (b + 1) * BLOCK);
    out[at] = b === blocks - 1 ? 1 : 0;
    out[at + 1] = chunk.length & 0xff;
    out[at + 2] = chunk.length >> 8;
    out[at + 3] = ~chunk.length & 0xff;
    out[at + 4] = (~chunk.length >> 8) & 0xff;
    out.set(chunk, at + 5);
    at += 5 + chunk.length;
  }
  let a = 1;
  let s = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    s = (s + a) % 65521;
  }
  const adler = ((s << 16) | a) >>> 0;
  out.set([adler >>> 24, (adler >>> 16) & 0xff, (adler >>> 8) & 0xff, adler & 0xff], at);
  return out;
}

const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** git's base85 lines: a length letter (A-Z for 1-26 bytes, a-z for 27-52), then the bytes in base 85. */
function base85Lines(data: Uint8Array): string[] {
  const lines: string[] = [];
  for (let start = 0; start < data.length; start += 52) {
    const line = data.subarray(start, start + 52);
    let text = line.length <= 26 ? String.fromCharCode(64 + line.length) : String.fromCharCode(96 + line.length - 26);
    for (let i = 0; i < line.length; i += 4) {
      let acc = (((line[i] ?? 0) << 24) | ((line[i + 1] ?? 0) << 16) | ((line[i + 2] ?? 0) << 8) | (line[i + 3] ?? 0)) >>> 0;
      const group: string[] = [];
      for (let k = 0; k < 5; k += 1) {
        group.unshift(BASE85[acc % 85] ?? "");
        acc = Math.floor(acc / 85);
      }
      text += group.join("");
    }
    lines.push(text);
  }
  return lines;
}

function literal(content: Uint8Array): string {
  return `literal ${content.length}\n${base85Lines(zlibStored(content)).map((l) => `${l}\n`).join("")}\n`;
}

/** One file's section as a git binary patch. */
export async function binaryPatchSection(file: BinaryFile, base: Uint8Array | null, head: Uint8Array | null): Promise<string> {
  const oldId = base === null ? NULL_ID : await blobId(base);
  const newId = head === null ? NULL_ID : await blobId(head);
  return `${file.header}index ${oldId}..${newId}\nGIT binary patch\n${literal(head ?? new Uint8Array())}`;
}

/**
 * The split's patches with its binary files added to the patch of their kind. Fails with a
 * reason when a content is missing or the contents together exceed PR_LIMITS.maxBinaryBytes.
 */
export async function completeBinaryPatches(
  split: PatchSplit,
  contents: BinaryContents,
): Promise<ParseResult<{ solutionPatch: string; testPatch: string }>> {
  let total = 0;
  const sections: { kind: BinaryFile["kind"]; text: string }[] = [];
  for (const file of split.binaryFiles) {
    const basePath = file.previousPath ?? file.path;
    const base = file.status === "added" ? null : (contents.base.get(basePath) ?? undefined);
    const head = file.status === "removed" ? null : (contents.head.get(file.path) ?? undefined);
    if (base === undefined) return { ok: false, reason: `The content of ${basePath} at the base commit is missing.` };
    if (head === undefined) return { ok: false, reason: `The content of ${file.path} at the head commit is missing.` };
    total += (base?.length ?? 0) + (head?.length ?? 0);
    if (total > PR_LIMITS.maxBinaryBytes) {
      return {
        ok: false,
        reason:
          `The pull request's binary files are larger than ${PR_LIMITS.maxBinaryBytes / (1024 * 1024)} MiB together; ` +
          "a task cannot carry them. Choose a smaller pull request.",
      };
    }
    sections.push({ kind: file.kind, text: await binaryPatchSection(file, base, head) });
  }
  const of = (kind: BinaryFile["kind"]) => sections.filter((s) => s.kind === kind).map((s) => s.text).join("");
  return { ok: true, value: { solutionPatch: split.solutionPatch + of("source"), testPatch: split.testPatch + of("test") } };
}
