import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ArtifactCache, type CacheLease } from "../src/cache";
import type { ArchivePolicy } from "../src/archive";

// Workspaces from the cache: a copy of the entry's tree, made ahead for the next job when asked.
const SHA = "a".repeat(64);
const POLICY: ArchivePolicy = { stripTopLevel: true, maxBytes: 1024, maxEntries: 10, systemLinkPrefixes: [], packedByRunner: false };

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "assay-cache-test-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function cacheWithTree(maxBytes: number): Promise<{ cache: ArtifactCache; lease: CacheLease }> {
  const cache = new ArtifactCache(join(root, "cache"), maxBytes, 1024 ** 2, () => undefined);
  await cache.init();
  await cache.adopt("snapshot", SHA, async (dir) => {
    await mkdir(join(dir, "src"));
    await writeFile(join(dir, "src", "a.js"), "exports.a = 1;\n", { mode: 0o640 });
  });
  // A hit: the URL is never fetched.
  return { cache, lease: await cache.acquire("snapshot", SHA, "http://127.0.0.1:9/never", POLICY) };
}

async function placed(cache: ArtifactCache, lease: CacheLease, name: string): Promise<string> {
  const dest = join(root, name);
  await mkdir(dest);
  await cache.placeCopy(lease, dest);
  return dest;
}

it("places a copy of the tree, modes kept; a copy made ahead serves the next job untouched by the last", async () => {
  const { cache, lease } = await cacheWithTree(1024 ** 2);
  const entryBytes = cache.stats().bytes;
  const first = await placed(cache, lease, "first");
  expect(await readFile(join(first, "src", "a.js"), "utf8")).toBe("exports.a = 1;\n");
  expect((await stat(join(first, "src", "a.js"))).mode & 0o777).toBe(0o640);

  await writeFile(join(first, "src", "a.js"), "tampered\n");
  await cache.copyAhead(lease);
  expect(cache.stats().bytes).toBe(2 * entryBytes);

  const second = await placed(cache, lease, "second");
  expect(cache.stats().bytes).toBe(entryBytes);
  expect(await readFile(join(second, "src", "a.js"), "utf8")).toBe("exports.a = 1;\n");
  expect((await stat(join(second, "src", "a.js"))).mode & 0o777).toBe(0o640);
});

it("makes no copy ahead where the byte budget has no room for it", async () => {
  const { cache, lease } = await cacheWithTree(1);
  const bytes = cache.stats().bytes;
  await cache.copyAhead(lease);
  expect(cache.stats().bytes).toBe(bytes);
  expect(await readFile(join(await placed(cache, lease, "only"), "src", "a.js"), "utf8")).toBe("exports.a = 1;\n");
});
