import { createReadStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { posix } from "node:path";
import * as tar from "tar";
import { checkRelativePath } from "../../protocol/paths";
import { runTool } from "./run-tool";
import { UnsafeInputError } from "./safe-path";

export interface ArchivePolicy {
  /** Strip the single top-level folder GitHub tarballs wrap everything in. */
  stripTopLevel: boolean;
  maxBytes: number;
  maxEntries: number;
  /**
   * Environment archives hold virtualenvs whose interpreter links point at the system
   * Python (`/usr/bin/python3`); those resolve inside the sandbox's read-only /usr, so
   * absolute link targets under these prefixes are accepted. Snapshots get none.
   */
  systemLinkPrefixes: string[];
  /**
   * The archive is one the runner packed itself (createArchive): after the inspection the
   * system's tar unpacks it, at about an eighth of node-tar's CPU on node_modules' many small
   * files (0.4 against 3.2 CPU-s for 3,200 files, 40 MB). An archive made elsewhere (a
   * snapshot) is unpacked by the parser that inspected it, so that no difference between two
   * tar readers can place a file the inspection did not see.
   */
  packedByRunner: boolean;
}

interface Listing {
  strip: 0 | 1;
  entries: number;
  bytes: number;
}

const FILE_TYPES = new Set(["File", "OldFile", "ContiguousFile"]);
const ALLOWED_TYPES = new Set([...FILE_TYPES, "Directory", "SymbolicLink", "Link"]);

/**
 * Reads the whole archive once without writing anything and refuses it if any entry could
 * land or point outside the destination: absolute or `..` paths, device files, links that
 * resolve outside the root (following the archive's own links), entries below a link, and
 * archives over the size or entry caps (aborted as soon as the headers say so).
 */
export async function inspectArchive(file: string, policy: ArchivePolicy): Promise<Listing> {
  const raw: Array<{ path: string; type: string; linkpath: string }> = [];
  let bytes = 0;
  const parser = new tar.Parser({ strict: true });
  let refusal: Error | null = null;
  const refuse = (message: string) => {
    refusal ??= new UnsafeInputError(message);
    parser.abort(refusal);
  };
  parser.on("entry", (entry: tar.ReadEntry) => {
    entry.resume();
    if (refusal) return;
    if (raw.length >= policy.maxEntries) return refuse(`archive has more than ${policy.maxEntries} entries`);
    bytes += entry.size ?? 0;
    if (bytes > policy.maxBytes) return refuse(`archive unpacks to more than ${policy.maxBytes} bytes`);
    if (!ALLOWED_TYPES.has(entry.type)) return refuse(`archive entry ${JSON.stringify(entry.path)} has refused type ${entry.type}`);
    raw.push({ path: entry.path, type: entry.type, linkpath: entry.linkpath ?? "" });
  });
  const input = createReadStream(file);
  try {
    await new Promise<void>((resolve, reject) => {
      input.on("error", reject);
      parser.on("error", reject);
      parser.on("abort", reject);
      parser.on("end", () => resolve());
      input.pipe(parser);
    });
  } catch (err) {
    input.destroy();
    if (refusal) throw refusal;
    throw new UnsafeInputError(`unreadable archive: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (refusal) throw refusal;

  const strip = policy.stripTopLevel ? commonTopLevel(raw.map((e) => e.path)) : 0;
  const entries: Array<{ path: string; type: string; linkpath: string }> = [];
  for (const e of raw) {
    const whole = e.path.replace(/^\.\//, "");
    const rawVerdict = whole === "" ? null : checkRelativePath(whole);
    if (rawVerdict && !rawVerdict.ok) throw new UnsafeInputError(`archive entry refused: ${rawVerdict.reason}`);
    const path = stripPath(e.path, strip);
    if (path === null) continue;
    const verdict = checkRelativePath(path);
    if (!verdict.ok) throw new UnsafeInputError(`archive entry refused: ${verdict.reason}`);
    entries.push({ ...e, path: verdict.path });
  }
  const links = new Map(entries.filter((e) => e.type === "SymbolicLink").map((e) => [e.path, e.linkpath]));
  for (const e of entries) {
    const parts = e.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      if (links.has(parts.slice(0, i).join("/"))) throw new UnsafeInputError(`archive entry ${JSON.stringify(e.path)} lies below a symlink`);
    }
    if (e.type === "SymbolicLink" && resolveLink(links, posix.dirname(e.path), e.linkpath, policy.systemLinkPrefixes) === null) {
      throw new UnsafeInputError(`archive symlink ${JSON.stringify(e.path)} -> ${JSON.stringify(e.linkpath)} points outside the workspace`);
    }
    if (e.type === "Link") {
      const target = stripPath(e.linkpath, strip);
      const verdict = target === null ? null : checkRelativePath(target);
      if (!verdict?.ok || resolveLink(links, ".", verdict.path, []) === null) {
        throw new UnsafeInputError(`archive hardlink ${JSON.stringify(e.path)} -> ${JSON.stringify(e.linkpath)} points outside the workspace`);
      }
    }
  }
  return { strip, entries: entries.length, bytes };
}

/** Inspects, then extracts; nothing is written for a refused archive. */
export async function extractArchive(file: string, dest: string, policy: ArchivePolicy): Promise<Listing> {
  const listing = await inspectArchive(file, policy);
  await mkdir(dest, { recursive: true });
  if (policy.packedByRunner) {
    // umask 022 as node-tar's processUmask below: whatever the runner's own, sandbox users read every file.
    await runTool("/bin/sh", ["-c", 'umask 022 && exec tar "$@"', "tar", "-x", "-z", "-f", file, "-C", dest, "--no-same-owner", "--no-same-permissions", `--strip-components=${listing.strip}`]);
    return listing;
  }
  await tar.x({
    file,
    cwd: dest,
    strip: listing.strip,
    strict: true,
    preserveOwner: false,
    processUmask: 0o022,
    maxDepth: 256,
  });
  return listing;
}

/**
 * gzip's fastest level: an environment (tens of MB of node_modules) packs in about a third of
 * the CPU of the default level (0.9 vs 2.4 s for 56 MB) for an archive about a quarter larger
 * (14.1 vs 11.1 MB). It is packed on the import's critical path and downloaded once per runner.
 */
const ENVIRONMENT_GZIP = "gzip -1";

/**
 * Packs `entries` of `cwd` with the system's tar (links stored as links, never followed; no
 * owners), in less than half of node-tar's CPU (0.7 against 1.7 CPU-s for 3,200 files).
 * Unpacked by `extractArchive` with a policy that says `packedByRunner`.
 */
export async function createArchive(cwd: string, entries: string[], file: string): Promise<void> {
  await runTool("tar", ["-c", "-I", ENVIRONMENT_GZIP, "-f", file, "-C", cwd, "--format=gnu", "--owner=0", "--group=0", "--numeric-owner", "--", ...entries]);
}

function commonTopLevel(paths: string[]): 0 | 1 {
  const tops = new Set<string>();
  let nested = false;
  for (const p of paths) {
    const trimmed = p.replace(/^\.\//, "");
    const [top, ...rest] = trimmed.split("/");
    tops.add(top ?? "");
    if (rest.some((s) => s !== "")) nested = true;
  }
  return tops.size === 1 && nested ? 1 : 0;
}

function stripPath(path: string, strip: 0 | 1): string | null {
  const trimmed = path.replace(/^\.\//, "").replace(/\/+$/, "");
  if (trimmed === "" || trimmed === ".") return null;
  if (strip === 0) return trimmed;
  const slash = trimmed.indexOf("/");
  return slash === -1 ? null : trimmed.slice(slash + 1);
}

/**
 * Follows `target` from directory `base` through the archive's own symlinks the way the
 * kernel would, and returns the resolved path, or null if it climbs above the root or is
 * absolute (outside the allowed system prefixes, which resolve in the sandbox's /usr).
 */
function resolveLink(links: Map<string, string>, base: string, target: string, systemPrefixes: string[]): string | null {
  let budget = 40;
  const walk = (from: string[], rel: string): string[] | "system" | null => {
    if (rel.startsWith("/")) {
      return systemPrefixes.some((p) => rel.startsWith(p)) && !rel.split("/").includes("..") ? "system" : null;
    }
    const stack = [...from];
    for (const part of rel.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (stack.length === 0) return null;
        stack.pop();
        continue;
      }
      stack.push(part);
      const next = links.get(stack.join("/"));
      if (next === undefined) continue;
      if (--budget < 0) return null;
      stack.pop();
      const resolved = walk(stack, next);
      if (resolved === null || resolved === "system") return resolved;
      stack.splice(0, stack.length, ...resolved);
    }
    return stack;
  };
  const result = walk(base === "." ? [] : base.split("/"), target);
  if (result === null) return null;
  return result === "system" ? target : result.join("/");
}
