import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ArchivePolicy, extractArchive } from "./archive";
import type { Logger } from "./log";
import { runTool } from "./run-tool";
import { diskUsage } from "./workspace-fs";
import { downloadVerified } from "./transfer";

export type CacheKind = "snapshot" | "environment";

interface Entry {
  key: string;
  path: string;
  bytes: number;
  lastUsed: number;
  pins: number;
}

export interface CacheLease {
  key: string;
  path: string;
  hit: boolean;
  release(): void;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  max_bytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

/**
 * Unpacked snapshots and environments on local disk, addressed by the sha256 of their
 * archive (verified on download), so repeated jobs for a task neither download nor unpack
 * again. Least recently used entries that no running job holds are evicted past the byte
 * budget; concurrent requests for the same digest share one download.
 */
export class ArtifactCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();
  /**
   * A copy of an entry's tree made ahead of the job that takes it (see `copyAhead`), by entry
   * key: repeated jobs for a task get their workspace by a rename instead of waiting for cp.
   * Counted in the budget, and the first to go past it.
   */
  private readonly spares = new Map<string, { dir: string; bytes: number }>();
  private readonly copying = new Set<string>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(
    private readonly root: string,
    private readonly maxBytes: number,
    private readonly maxDownloadBytes: number,
    private readonly log: Logger,
  ) {}

  async init(): Promise<void> {
    await rm(join(this.root, "incoming"), { recursive: true, force: true });
    await mkdir(join(this.root, "incoming"), { recursive: true, mode: 0o755 });
    for (const kind of ["snapshot", "environment"] as const) {
      const dir = join(this.root, kind);
      await mkdir(dir, { recursive: true, mode: 0o755 });
      for (const name of await readdir(dir)) {
        if (!/^[0-9a-f]{64}$/.test(name)) continue;
        const path = join(dir, name);
        const bytes = Number(await readFile(`${path}.size`, "utf8").catch(() => "")) || (await diskUsage(path));
        const lastUsed = (await stat(path)).mtimeMs;
        this.entries.set(`${kind}/${name}`, { key: `${kind}/${name}`, path, bytes, lastUsed, pins: 0 });
      }
    }
    await this.evict();
  }

  stats(): CacheStats {
    let bytes = 0;
    for (const e of this.entries.values()) bytes += e.bytes;
    for (const spare of this.spares.values()) bytes += spare.bytes;
    return { entries: this.entries.size, bytes, max_bytes: this.maxBytes, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }

  /** The unpacked tree for `sha256`, downloading and extracting it on a miss. */
  async acquire(kind: CacheKind, sha256: string, url: string, policy: ArchivePolicy): Promise<CacheLease> {
    const key = `${kind}/${sha256}`;
    const existing = this.entries.get(key);
    if (existing) {
      this.hits++;
      return this.lease(existing, true);
    }
    let pending = this.inflight.get(key);
    const joined = pending !== undefined;
    if (!pending) {
      this.misses++;
      pending = this.fetch(kind, sha256, url, policy).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    } else {
      this.hits++;
    }
    const entry = await pending;
    return this.lease(entry, joined);
  }

  /**
   * Puts a copy of a leased tree at `dest`, an empty directory in the work dir: the copy made
   * ahead for it when there is one, else a fresh one.
   */
  async placeCopy(lease: CacheLease, dest: string): Promise<void> {
    const spare = this.spares.get(lease.key);
    this.spares.delete(lease.key);
    if (spare && (await rename(spare.dir, dest).then(() => true, () => false))) return;
    if (spare) await rm(spare.dir, { recursive: true, force: true });
    await copyTree(lease.path, dest);
  }

  /**
   * Makes the next copy of a leased tree for `placeCopy`, unless one is there or on its way or
   * the budget has no room for it. It spawns cp, which blocks this thread for a moment: call it
   * while no job waits on this thread (once a command runs). Settles once the copy is in
   * place or given up; jobs do not wait for it.
   */
  copyAhead(lease: CacheLease): Promise<void> {
    const entry = this.entries.get(lease.key);
    if (!entry || this.spares.has(entry.key) || this.copying.has(entry.key)) return Promise.resolve();
    if (this.stats().bytes + entry.bytes > this.maxBytes) return Promise.resolve();
    this.copying.add(entry.key);
    entry.pins++;
    return (async () => {
      let dir: string | null = null;
      try {
        dir = await this.staging();
        await copyTree(entry.path, dir);
        if (this.entries.get(entry.key) === entry) {
          this.spares.set(entry.key, { dir, bytes: entry.bytes });
          return;
        }
      } catch (err) {
        this.log("cache_copy_failed", { key: entry.key, error: err instanceof Error ? err.message : String(err) });
      }
      if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    })().finally(async () => {
      this.copying.delete(entry.key);
      entry.pins--;
      await this.evict();
    });
  }

  /** Moves a directory the runner built itself (a prepared environment) into the cache. */
  async adopt(kind: CacheKind, sha256: string, build: (dir: string) => Promise<void>): Promise<void> {
    const key = `${kind}/${sha256}`;
    if (this.entries.has(key)) return;
    const staging = await this.staging();
    try {
      await build(staging);
      await this.commit(kind, sha256, staging);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async fetch(kind: CacheKind, sha256: string, url: string, policy: ArchivePolicy): Promise<Entry> {
    const staging = await this.staging();
    const archive = `${staging}.tar.gz`;
    const started = performance.now();
    try {
      const downloaded = await downloadVerified(url, sha256, archive, this.maxDownloadBytes);
      await extractArchive(archive, staging, policy);
      const entry = await this.commit(kind, sha256, staging);
      this.log("cache_filled", { kind, sha256, download_bytes: downloaded, bytes: entry.bytes, ms: Math.round(performance.now() - started) });
      return entry;
    } finally {
      await rm(archive, { force: true });
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async staging(): Promise<string> {
    const dir = join(this.root, "incoming", `${Date.now()}-${Math.random().toString(36).slice(2)}`);
    await mkdir(dir, { mode: 0o755 });
    return dir;
  }

  private async commit(kind: CacheKind, sha256: string, staging: string): Promise<Entry> {
    const key = `${kind}/${sha256}`;
    const path = join(this.root, kind, sha256);
    const bytes = await diskUsage(staging);
    await writeFile(`${path}.size`, String(bytes));
    await rm(path, { recursive: true, force: true });
    await rename(staging, path);
    const entry: Entry = { key, path, bytes, lastUsed: Date.now(), pins: 0 };
    this.entries.set(key, entry);
    await this.evict(key);
    return entry;
  }

  private lease(entry: Entry, hit: boolean): CacheLease {
    entry.pins++;
    entry.lastUsed = Date.now();
    void utimes(entry.path, new Date(), new Date()).catch(() => undefined);
    let released = false;
    return {
      key: entry.key,
      path: entry.path,
      hit,
      release: () => {
        if (released) return;
        released = true;
        entry.pins--;
        void this.evict();
      },
    };
  }

  private async evict(keep?: string): Promise<void> {
    let total = this.stats().bytes;
    // Copies made ahead only save time: they go before any entry does.
    for (const [key, spare] of this.spares) {
      if (total <= this.maxBytes) break;
      this.spares.delete(key);
      total -= spare.bytes;
      await rm(spare.dir, { recursive: true, force: true });
    }
    const candidates = [...this.entries.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    for (const e of candidates) {
      if (total <= this.maxBytes) break;
      if (e.pins > 0 || e.key === keep) continue;
      this.entries.delete(e.key);
      total -= e.bytes;
      this.evictions++;
      await rm(e.path, { recursive: true, force: true });
      await rm(`${e.path}.size`, { force: true });
      this.log("cache_evicted", { key: e.key, bytes: e.bytes });
    }
  }
}

/** The tree's contents into `to`, which exists; modes and times kept, owned by the runner. */
async function copyTree(from: string, to: string): Promise<void> {
  await runTool("cp", ["-a", "--no-preserve=ownership", `${from}/.`, to]);
}
