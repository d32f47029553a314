/**
 * Similarity of submissions (docs/scoring.md, "Similarity"): winnowed k-gram fingerprints over
 * normalized tokens, as MOSS and Dolos compute them. Pure; the flow reads the files.
 *
 * Tokens are lexical, in one pass that knows a few comment and string forms and no grammar:
 * Dolos's tree-sitter parsers are native Node.js bindings a Worker cannot load, and a lexer is
 * enough to see a copy through renames, new comments and new formatting. Identifiers become one
 * token and literals another, keywords and punctuation stay; comments (docstrings too),
 * whitespace, `;` and trailing commas go.
 *
 * Evidence for a reviewer, never a deduction: no score reads it.
 */

/** k: tokens per k-gram; window: k-grams per winnowing window (a copy of window + k - 1 tokens is always seen). */
export const SIMILARITY_PARAMS = { k: 20, window: 10 } as const;

/** What one comparison reads and keeps (docs/scoring.md, "Similarity"). */
export const SIMILARITY_LIMITS = {
  /** A changed source file larger than this (UTF-8 bytes) is not compared. */
  fileBytes: 256 * 1024,
  /** Source bytes compared of one side (an attempt, the upstream solution); files past it, by path, are left out. */
  sideBytes: 2 * 1024 * 1024,
  /** Base bytes read from the task's snapshot, to leave out what the sides share with it. */
  baseBytes: 16 * 1024 * 1024,
  /** The other submitted attempts of the task compared with one, the most recently submitted. */
  peers: 50,
  /** Matching regions kept per pair, the longest. */
  regionsPerPair: 8,
  /** Lines and characters of each side's text in a region; the line range is the whole region's. */
  regionLines: 40,
  regionChars: 2000,
  /** Occurrences of one fingerprint per side that make regions (all count towards the similarity). */
  occurrencesPerHash: 4,
} as const;

export interface SourceFile {
  path: string;
  text: string;
}

/** One side of a matching region: where it is and its text, cut to the limits. */
export interface RegionSide {
  path: string;
  /** 1-based, inclusive. */
  start_line: number;
  end_line: number;
  text: string;
  /** The text is cut (SIMILARITY_LIMITS.regionLines, regionChars); the lines are the whole region's. */
  truncated: boolean;
}

/** A run of code both sides share: `left` is the side compared, `right` the other. */
export interface SimilarityRegion {
  left: RegionSide;
  right: RegionSide;
  /** Normalized tokens the region spans on the left. */
  tokens: number;
}

export interface Comparison {
  /** Shared fingerprints over all of both sides' (Sørensen–Dice), 0..1, three decimals. */
  similarity: number;
  regions: SimilarityRegion[];
}

interface Fingerprint {
  hash: number;
  /** The k-gram's index: it spans tokens pos .. pos + k - 1. */
  pos: number;
}

export interface FingerprintedFile {
  path: string;
  lines: string[];
  tokens: string[];
  /** Line (1-based) of each normalized token. */
  tokenLines: number[];
  fingerprints: Fingerprint[];
}

type CommentStyle = "slash" | "hash" | "both";

const HASH_COMMENT_EXTENSIONS = new Set(["py", "pyi", "rb", "sh", "bash", "zsh", "pl", "r", "yaml", "yml", "toml", "ex", "exs", "jl", "nim", "cr", "tf", "cfg", "ini", "mk"]);
const BOTH_COMMENT_EXTENSIONS = new Set(["php"]);
const BACKTICK_STRING_EXTENSIONS = new Set(["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "vue", "svelte"]);
const TRIPLE_QUOTE_EXTENSIONS = new Set(["py", "pyi", "kt", "kts", "scala", "swift", "java", "jl"]);

/** Keywords of the languages tasks come in: kept as they are, where any other name becomes IDENTIFIER. */
const KEYWORDS = new Set(
  (
    "abstract and as assert async await break case catch chan class const continue def default defer del delete do elif else enum " +
    "except export extends final finally fn for from func function go goto if impl implements import in instanceof interface is " +
    "lambda let loop match mod module mut new nil None nonlocal not null of or package pass private protected pub public raise " +
    "range return select self static struct super switch this throw throws trait True true False false try type typeof undefined " +
    "union unless until use var void where while with yield"
  ).split(" "),
);

const IDENTIFIER = "\u0001id";
const LITERAL = "\u0001lit";

function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (name === "makefile" || name === "dockerfile") return "mk";
  const dot = name.lastIndexOf(".");
  return dot < 0 ? "" : name.slice(dot + 1);
}

function commentStyle(ext: string): CommentStyle {
  if (BOTH_COMMENT_EXTENSIONS.has(ext)) return "both";
  return HASH_COMMENT_EXTENSIONS.has(ext) ? "hash" : "slash";
}

const isIdentifierStart = (c: string) => /[\p{L}_$]/u.test(c);
const isIdentifierPart = (c: string) => /[\p{L}\p{N}_$]/u.test(c);
const isDigit = (c: string) => c >= "0" && c <= "9";
const CLOSERS = new Set([")", "]", "}"]);

/** The file's normalized tokens, each with its 1-based line. */
export function tokenize(path: string, text: string): { tokens: string[]; lines: number[] } {
  const ext = extensionOf(path);
  const comments = commentStyle(ext);
  const backtick = BACKTICK_STRING_EXTENSIONS.has(ext);
  const triple = TRIPLE_QUOTE_EXTENSIONS.has(ext);
  const tokens: string[] = [];
  const lines: number[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  const emit = (token: string, at: number) => {
    tokens.push(token);
    lines.push(at);
  };
  /** Moves i to `end`, counting the newlines passed. */
  const skipTo = (end: number) => {
    for (; i < end; i += 1) if (text[i] === "\n") line += 1;
  };
  while (i < n) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === "\n") {
      line += 1;
      i += 1;
    } else if (c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v") {
      i += 1;
    } else if (comments !== "hash" && c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? n : end;
    } else if (comments !== "hash" && c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      skipTo(end < 0 ? n : end + 2);
    } else if (comments !== "slash" && c === "#") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? n : end;
    } else if (triple && (c === '"' || c === "'") && text.startsWith(c.repeat(3), i)) {
      const start = line;
      const end = text.indexOf(c.repeat(3), i + 3);
      // One that starts its line is a docstring, which is a comment in all but name.
      const docstring = /^[ \t]*$/.test(text.slice(text.lastIndexOf("\n", i - 1) + 1, i));
      skipTo(end < 0 ? n : end + 3);
      if (!docstring) emit(LITERAL, start);
    } else if (c === '"' || c === "'" || (backtick && c === "`")) {
      // A quoted string ends at its quote; one of ' or " at the end of its line too, which keeps a
      // stray quote (a Rust lifetime, an apostrophe in a shell word) from swallowing the file.
      const start = line;
      let j = i + 1;
      while (j < n && text[j] !== c && (c === "`" || text[j] !== "\n")) j += text[j] === "\\" ? 2 : 1;
      skipTo(Math.min(n, j + 1));
      emit(LITERAL, start);
    } else if (isDigit(c) || (c === "." && next !== undefined && isDigit(next))) {
      let j = i + 1;
      while (j < n && (isIdentifierPart(text[j] as string) || (text[j] === "." && isDigit(text[j + 1] ?? "")))) j += 1;
      i = j;
      emit(LITERAL, line);
    } else if (isIdentifierStart(c)) {
      let j = i + 1;
      while (j < n && isIdentifierPart(text[j] as string)) j += 1;
      const word = text.slice(i, j);
      i = j;
      emit(KEYWORDS.has(word) ? word : IDENTIFIER, line);
    } else {
      i += 1;
      if (c === ";") continue;
      emit(c, line);
    }
  }
  return dropTrailingCommas(tokens, lines);
}

/** A comma before a closing bracket is formatting (formatters add and remove it). */
function dropTrailingCommas(tokens: string[], lines: number[]) {
  const keep = tokens.map((t, i) => !(t === "," && CLOSERS.has(tokens[i + 1] ?? "")));
  return { tokens: tokens.filter((_, i) => keep[i]), lines: lines.filter((_, i) => keep[i]) };
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const BASE = 0x01000193;

/** The hash of every k-gram of `tokens`, by a rolling polynomial over the tokens' own hashes. */
export function kgramHashes(tokens: readonly string[], k = SIMILARITY_PARAMS.k): number[] {
  if (tokens.length < k) return [];
  const t = tokens.map(fnv1a);
  let top = 1;
  for (let j = 1; j < k; j += 1) top = Math.imul(top, BASE);
  let h = 0;
  for (let j = 0; j < k; j += 1) h = (Math.imul(h, BASE) + (t[j] as number)) | 0;
  const out: number[] = [h >>> 0];
  for (let i = 1; i + k <= t.length; i += 1) {
    h = (Math.imul(h - Math.imul(t[i - 1] as number, top), BASE) + (t[i + k - 1] as number)) | 0;
    out.push(h >>> 0);
  }
  return out;
}

/**
 * Winnowing (Schleimer, Wilkerson and Aiken, 2003): the smallest hash of every window of
 * `window` k-grams, the rightmost of equals, each position once.
 */
export function winnow(hashes: readonly number[], window = SIMILARITY_PARAMS.window): Fingerprint[] {
  const out: Fingerprint[] = [];
  if (hashes.length === 0) return out;
  const w = Math.min(window, hashes.length);
  let last = -1;
  for (let start = 0; start + w <= hashes.length; start += 1) {
    let min = start;
    for (let j = start + 1; j < start + w; j += 1) if ((hashes[j] as number) <= (hashes[min] as number)) min = j;
    if (min !== last) {
      out.push({ hash: hashes[min] as number, pos: min });
      last = min;
    }
  }
  return out;
}

export function fingerprintFile(file: SourceFile): FingerprintedFile {
  const { tokens, lines } = tokenize(file.path, file.text);
  return { path: file.path, lines: file.text.split(/\r?\n/), tokens, tokenLines: lines, fingerprints: winnow(kgramHashes(tokens)) };
}

/** Every k-gram hash of the files: what a base (the task's version of the files) leaves out of a comparison. */
export function allKgrams(files: readonly SourceFile[]): Set<number> {
  const out = new Set<number>();
  for (const f of files) for (const h of kgramHashes(tokenize(f.path, f.text).tokens)) out.add(h);
  return out;
}

/**
 * The files of one side that are compared: text files within SIMILARITY_LIMITS.fileBytes, by
 * path, until the side's bytes reach SIMILARITY_LIMITS.sideBytes.
 */
export function comparedFiles(files: readonly { path: string; content: Uint8Array }[]): SourceFile[] {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const out: SourceFile[] = [];
  let bytes = 0;
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    if (f.content.byteLength > SIMILARITY_LIMITS.fileBytes || bytes + f.content.byteLength > SIMILARITY_LIMITS.sideBytes) continue;
    let text: string;
    try {
      text = decoder.decode(f.content);
    } catch {
      continue;
    }
    bytes += f.content.byteLength;
    out.push({ path: f.path, text });
  }
  return out;
}

interface Occurrence {
  file: FingerprintedFile;
  pos: number;
}

function occurrences(files: readonly FingerprintedFile[], excluded: ReadonlySet<number>): Map<number, Occurrence[]> {
  const out = new Map<number, Occurrence[]>();
  for (const file of files) {
    for (const { hash, pos } of file.fingerprints) {
      if (excluded.has(hash)) continue;
      const list = out.get(hash);
      if (list) list.push({ file, pos });
      else out.set(hash, [{ file, pos }]);
    }
  }
  return out;
}

function regionSide(file: FingerprintedFile, firstToken: number, lastToken: number): RegionSide {
  const start = file.tokenLines[firstToken] as number;
  const end = file.tokenLines[lastToken] as number;
  const lines = file.lines.slice(start - 1, end);
  let text = lines.slice(0, SIMILARITY_LIMITS.regionLines).join("\n");
  let truncated = lines.length > SIMILARITY_LIMITS.regionLines;
  if (text.length > SIMILARITY_LIMITS.regionChars) {
    text = text.slice(0, SIMILARITY_LIMITS.regionChars);
    truncated = true;
  }
  return { path: file.path, start_line: start, end_line: end, text, truncated };
}

/**
 * Compares two sides' files. Fingerprints in `excluded` (the task's own code) count on neither
 * side. The similarity is the Sørensen–Dice coefficient of the two fingerprint sets; regions
 * join the shared fingerprints that follow each other at the same offset, longest first.
 */
export function compareSides(left: readonly FingerprintedFile[], right: readonly FingerprintedFile[], excluded: ReadonlySet<number>): Comparison {
  const { k, window } = SIMILARITY_PARAMS;
  const a = occurrences(left, excluded);
  const b = occurrences(right, excluded);
  let shared = 0;
  // Runs of matches: one per pair of files and offset between them.
  const runs = new Map<string, { l: FingerprintedFile; r: FingerprintedFile; pairs: [number, number][] }>();
  for (const [hash, ours] of a) {
    const theirs = b.get(hash);
    if (!theirs) continue;
    shared += 1;
    for (const x of ours.slice(0, SIMILARITY_LIMITS.occurrencesPerHash)) {
      for (const y of theirs.slice(0, SIMILARITY_LIMITS.occurrencesPerHash)) {
        const key = `${x.file.path}\u0000${y.file.path}\u0000${x.pos - y.pos}`;
        const run = runs.get(key) ?? { l: x.file, r: y.file, pairs: [] };
        run.pairs.push([x.pos, y.pos]);
        runs.set(key, run);
      }
    }
  }
  const total = a.size + b.size;
  const similarity = total === 0 ? 0 : Math.round((2 * shared * 1000) / total) / 1000;

  const found: { l: FingerprintedFile; r: FingerprintedFile; from: [number, number]; to: [number, number] }[] = [];
  for (const { l, r, pairs } of runs.values()) {
    pairs.sort((p, q) => p[0] - q[0]);
    let from = pairs[0] as [number, number];
    let to = from;
    for (const p of pairs.slice(1)) {
      // Shared code has a fingerprint in every window, so a longer gap is code that differs.
      if (p[0] - to[0] > window) {
        found.push({ l, r, from, to });
        from = p;
      }
      to = p;
    }
    found.push({ l, r, from, to });
  }
  const regions = found
    .map(({ l, r, from, to }) => {
      // Fingerprints mark a region only to within a window: its ends are where the tokens stop being equal.
      let [ls, rs] = from;
      let [le, re] = [to[0] + k - 1, to[1] + k - 1];
      while (ls > 0 && rs > 0 && l.tokens[ls - 1] === r.tokens[rs - 1]) [ls, rs] = [ls - 1, rs - 1];
      while (le + 1 < l.tokens.length && re + 1 < r.tokens.length && l.tokens[le + 1] === r.tokens[re + 1]) [le, re] = [le + 1, re + 1];
      return { left: regionSide(l, ls, le), right: regionSide(r, rs, re), tokens: le - ls + 1 };
    })
    .sort((x, y) => y.tokens - x.tokens || compareText(x.left.path, y.left.path) || x.left.start_line - y.left.start_line)
    .slice(0, SIMILARITY_LIMITS.regionsPerPair);
  return { similarity, regions };
}

function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The same regions as the other side sees them. */
export function mirrored(regions: readonly SimilarityRegion[]): SimilarityRegion[] {
  return regions.map((r) => ({ left: r.right, right: r.left, tokens: r.tokens }));
}
