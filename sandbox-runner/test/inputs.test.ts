import { existsSync } from "node:fs";
import { link, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createArchive, extractArchive, inspectArchive } from "../src/archive";
import { patchPaths } from "../src/patches";
import { type Harness, jobId, startHarness } from "./support/harness";
import { type TarEntry, tarGz } from "./support/tarball";

const passing = {
  "package.json": JSON.stringify({ name: "inputs", scripts: { test: "node --test" } }),
  "test/a.test.js": `require("node:test")("ok", () => {});\n`,
};
const b64 = (s: string) => Buffer.from(s).toString("base64");

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 62100 });
});
afterAll(() => h.close());

/** A job whose snapshot is a hand-built archive; the callback must be an ERROR. */
async function refusedArchive(entries: TarEntry[]): Promise<string> {
  const id = jobId("tar");
  const job = { ...h.job(id, {}), snapshot: h.worker.blob(`${id}-evil.tar.gz`, tarGz(entries)) };
  const cb = await h.run(job);
  expect(cb.status).toBe("ERROR");
  expect(cb.exit_code).toBeNull();
  return cb.reason ?? "";
}

describe("snapshot archives", () => {
  it("refuses zip-slip entries and writes nothing outside", async () => {
    const reason = await refusedArchive([{ path: "top/", dir: true }, { path: "top/ok.txt", content: "x" }, { path: "top/../../zip-slip-escape.txt", content: "pwned" }]);
    expect(reason).toMatch(/contains '\.\.'/);
    expect(existsSync(join(h.workDir, "zip-slip-escape.txt"))).toBe(false);
    expect(existsSync(join(h.workDir, "jobs", "zip-slip-escape.txt"))).toBe(false);
  });

  it("refuses absolute paths", async () => {
    expect(await refusedArchive([{ path: "/tmp/abs-escape.txt", content: "x" }])).toMatch(/absolute path/);
  });

  it("refuses symlinks pointing outside, directly or through another link", async () => {
    expect(await refusedArchive([{ path: "top/", dir: true }, { path: "top/shadow", symlink: "/etc/shadow" }])).toMatch(/points outside/);
    expect(await refusedArchive([{ path: "top/", dir: true }, { path: "top/up", symlink: "../../.." }])).toMatch(/points outside/);
    // Each link alone stays inside lexically; followed as the kernel would, the pair climbs out.
    expect(await refusedArchive([{ path: "top/", dir: true }, { path: "top/d/", dir: true }, { path: "top/d/self", symlink: "." }, { path: "top/d/esc", symlink: "self/../../.." }])).toMatch(/points outside/);
  });

  it("refuses entries written through a symlink and hardlinks out of the tree", async () => {
    expect(await refusedArchive([{ path: "top/", dir: true }, { path: "top/sub/", dir: true }, { path: "top/link", symlink: "sub" }, { path: "top/link/x.txt", content: "x" }])).toMatch(/below a symlink/);
    expect(await refusedArchive([{ path: "top/", dir: true }, { path: "top/hard", hardlink: "../../etc/passwd" }])).toMatch(/hardlink/);
  });

  it("refuses device files and FIFOs", async () => {
    expect(await refusedArchive([{ path: "top/", dir: true }, { path: "top/pipe", type: "fifo" }])).toMatch(/refused type/);
  });

  it("refuses a tar bomb by its headers, before unpacking", async () => {
    const reason = await refusedArchive([{ path: "top/", dir: true }, { path: "top/huge.bin", declaredSize: 50 * 1024 ** 3 }]);
    expect(reason).toMatch(/unpacks to more than/);
  });

  it("caps the number of entries", async () => {
    const dir = await mkdtemp(join(tmpdir(), "assay-entries-"));
    const file = join(dir, "many.tar.gz");
    await writeFile(file, tarGz(Array.from({ length: 50 }, (_, i) => ({ path: `top/f${i}`, content: "x" }))));
    await expect(inspectArchive(file, { stripTopLevel: true, maxBytes: 1e9, maxEntries: 20, systemLinkPrefixes: [], packedByRunner: false })).rejects.toThrow(/more than 20 entries/);
    await expect(inspectArchive(file, { stripTopLevel: true, maxBytes: 1e9, maxEntries: 100, systemLinkPrefixes: [], packedByRunner: false })).resolves.toMatchObject({ strip: 1, entries: 50 });
    await rm(dir, { recursive: true });
  });

  it("accepts links that stay inside, and a digest mismatch is an ERROR", async () => {
    const id = jobId("links");
    const entries: TarEntry[] = [
      { path: "top/", dir: true },
      ...Object.entries(passing).map(([p, content]) => ({ path: `top/${p}`, content })),
      { path: "top/lib/", dir: true },
      { path: "top/lib/real.js", content: "module.exports = 1;" },
      { path: "top/alias.js", symlink: "lib/real.js" },
      { path: "top/test/link.test.js", content: `require("node:test")("link", () => require("node:assert").equal(require("../alias.js"), 1));` },
    ];
    const cb = await h.run({ ...h.job(id, {}), snapshot: h.worker.blob(`${id}-ok.tar.gz`, tarGz(entries)) });
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 2, passed: 2 });

    const bad = jobId("digest");
    const job = h.job(bad, passing);
    const cb2 = await h.run({ ...job, snapshot: { ...(job.snapshot as object), sha256: "0".repeat(64) } });
    expect(cb2.status).toBe("ERROR");
    expect(cb2.reason).toMatch(/sha256 mismatch/);
  });
});

describe("environment archives (packed and unpacked by the system's tar)", () => {
  it("keep links as links, hard links as one file, modes readable by sandbox users whatever the runner's umask; a link out is refused", async () => {
    const dir = await mkdtemp(join(tmpdir(), "assay-env-archive-"));
    const tree = join(dir, "tree");
    await mkdir(join(tree, "node_modules/pkg/bin"), { recursive: true });
    await writeFile(join(tree, "node_modules/pkg/index.js"), "module.exports = 1;\n");
    await writeFile(join(tree, "node_modules/pkg/bin/cli.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
    await link(join(tree, "node_modules/pkg/index.js"), join(tree, "node_modules/pkg/same.js"));
    await mkdir(join(tree, "node_modules/.bin"));
    await symlink("../pkg/bin/cli.js", join(tree, "node_modules/.bin/cli"));
    const archive = join(dir, "env.tar.gz");
    await createArchive(tree, ["node_modules"], archive);

    const policy = { stripTopLevel: false, maxBytes: 1e9, maxEntries: 100, systemLinkPrefixes: [], packedByRunner: true };
    const previous = process.umask(0o077);
    try {
      await extractArchive(archive, join(dir, "out"), policy);
    } finally {
      process.umask(previous);
    }
    const out = join(dir, "out/node_modules");
    expect(await readlink(join(out, ".bin/cli"))).toBe("../pkg/bin/cli.js");
    expect((await stat(join(out, "pkg/bin/cli.js"))).mode & 0o777).toBe(0o755);
    expect((await stat(join(out, "pkg/index.js"))).mode & 0o777).toBe(0o644);
    expect((await stat(join(out, "pkg"))).mode & 0o777).toBe(0o755);
    expect((await stat(join(out, "pkg/same.js"))).ino).toBe((await stat(join(out, "pkg/index.js"))).ino);

    await symlink("../../../etc/passwd", join(tree, "node_modules/pkg/out"));
    await createArchive(tree, ["node_modules"], archive);
    await expect(extractArchive(archive, join(dir, "out2"), policy)).rejects.toThrow(/points outside the workspace/);
    expect(existsSync(join(dir, "out2"))).toBe(false);
    await rm(dir, { recursive: true });
  });
});

describe("environment archives from a hostile install", () => {
  it("a path the install made that reads as a tar option is packed as a name; TAR_OPTIONS in the runner's environment is not read", async () => {
    const dir = await mkdtemp(join(tmpdir(), "assay-env-hostile-"));
    const tree = join(dir, "tree");
    await mkdir(join(tree, "node_modules"), { recursive: true });
    await writeFile(join(tree, "node_modules/a.js"), "1;\n");
    // What a postinstall can leave at the workspace's top level, which prepare packs by name.
    const names = ["--checkpoint=1", "--checkpoint-action=exec=touch pwned", "-T"];
    for (const name of names) await writeFile(join(tree, name), "x");
    const archive = join(dir, "env.tar.gz");
    await createArchive(tree, [...names, "node_modules"], archive);
    // tar's checkpoint action would run in the runner's own working directory.
    expect(existsSync(join(process.cwd(), "pwned"))).toBe(false);

    const policy = { stripTopLevel: false, maxBytes: 1e9, maxEntries: 100, systemLinkPrefixes: [], packedByRunner: true };
    process.env.TAR_OPTIONS = "--to-stdout";
    try {
      await extractArchive(archive, join(dir, "out"), policy);
    } finally {
      delete process.env.TAR_OPTIONS;
    }
    for (const name of names) expect(await readFile(join(dir, "out", name), "utf8")).toBe("x");
    expect(await readFile(join(dir, "out/node_modules/a.js"), "utf8")).toBe("1;\n");
    expect(existsSync(join(dir, "out/pwned"))).toBe(false);
    await rm(dir, { recursive: true });
  });
});

describe("overlay files", () => {
  it("upserts and deletes files", async () => {
    const cb = await h.run(
      h.job(jobId("overlay"), { ...passing, "test/old.test.js": `require("node:test")("old", () => { throw new Error("should be deleted"); });` }, {
        files: [
          { path: "test/old.test.js", delete: true },
          { path: "test/new/deep.test.js", content_b64: b64(`require("node:test")("added", () => {});`) },
        ],
      }),
    );
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.tests.map((t) => t.name).sort()).toEqual(["added", "ok"]);
  });

  it("refuses to write through a symlink in the snapshot", async () => {
    const id = jobId("overlay-link");
    const entries: TarEntry[] = [{ path: "top/", dir: true }, { path: "top/inner/", dir: true }, { path: "top/via", symlink: "inner" }];
    const cb = await h.run({ ...h.job(id, {}), snapshot: h.worker.blob(`${id}.tar.gz`, tarGz(entries)), files: [{ path: "via/evil.js", content_b64: b64("x") }] });
    expect(cb.status).toBe("ERROR");
    expect(cb.reason).toMatch(/through the symlink "via"/);
  });

  it("answers 422 for traversal, absolute and NUL paths", async () => {
    for (const path of ["../escape.js", "/etc/passwd", "a/\u0000b", "a/../../b"]) {
      const answer = await h.submit(h.job(jobId("bad-path"), passing, { files: [{ path, content_b64: b64("x") }] }));
      expect(answer.status).toBe(422);
      expect(JSON.stringify(answer.body)).toMatch(/files/);
    }
  });
});

describe("patches", () => {
  const base = { ...passing, "src/math.js": "exports.add = (a, b) => a - b;\n", "src/old.js": "exports.old = true;\n", "src/moved.js": "exports.moved = 1;\n" };
  const gitDiff = [
    "diff --git a/src/math.js b/src/math.js",
    "--- a/src/math.js",
    "+++ b/src/math.js",
    "@@ -1 +1 @@",
    "-exports.add = (a, b) => a - b;",
    "+exports.add = (a, b) => a + b;",
    "diff --git a/src/old.js b/src/old.js",
    "deleted file mode 100644",
    "--- a/src/old.js",
    "+++ /dev/null",
    "@@ -1 +0,0 @@",
    "-exports.old = true;",
    "diff --git a/src/moved.js b/lib/renamed.js",
    "similarity index 100%",
    "rename from src/moved.js",
    "rename to lib/renamed.js",
    "diff --git a/test/math.test.js b/test/math.test.js",
    "new file mode 100644",
    "--- /dev/null",
    "+++ b/test/math.test.js",
    "@@ -0,0 +1,5 @@",
    "+const test = require(\"node:test\");",
    "+const assert = require(\"node:assert\");",
    "+test(\"add\", () => assert.equal(require(\"../src/math\").add(2, 2), 4));",
    "+test(\"old gone\", () => assert.throws(() => require(\"../src/old\")));",
    "+test(\"renamed\", () => assert.equal(require(\"../lib/renamed\").moved, 1));",
    "",
  ].join("\n");

  it("applies git-style diffs with edits, new, deleted and renamed files", async () => {
    const cb = await h.run(h.job(jobId("patch"), base, { patches: [gitDiff] }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 4, passed: 4, failed: 0 });
  });

  it("lists every touched path and refuses traversal in any header", () => {
    expect(patchPaths(gitDiff).sort()).toEqual(["lib/renamed.js", "src/math.js", "src/moved.js", "src/old.js", "test/math.test.js"]);
    expect(() => patchPaths("--- a/x\n+++ b/../../etc/cron.d/evil\n@@ -1 +1 @@\n-a\n+b\n")).toThrow(/'\.\.'/);
    expect(() => patchPaths("diff --git a/x b/y\nrename from x\nrename to ../y\n")).toThrow(/'\.\.'/);
    expect(() => patchPaths('--- a/x\n+++ "b/\\056\\056/evil"\n')).toThrow(/'\.\.'/);
  });

  it("refuses a bad patch with a clear ERROR and a symlink out of the workspace", async () => {
    const traversal = await h.run(h.job(jobId("patch-bad"), base, { patches: ["--- a/src/math.js\n+++ b/../../outside.js\n@@ -1 +1 @@\n-exports.add = (a, b) => a - b;\n+pwned\n"] }));
    expect(traversal.status).toBe("ERROR");
    expect(traversal.reason).toMatch(/patch refused: .*'\.\.'/);
    const link = ["diff --git a/evil b/evil", "new file mode 120000", "--- /dev/null", "+++ b/evil", "@@ -0,0 +1 @@", "+/etc/shadow", "\\ No newline at end of file", ""].join("\n");
    const linked = await h.run(h.job(jobId("patch-link"), base, { patches: [link] }));
    expect(linked.status).toBe("ERROR");
    expect(linked.reason).toMatch(/symlink "evil" points outside/);
    const stale = await h.run(h.job(jobId("patch-stale"), base, { patches: ["--- a/src/math.js\n+++ b/src/math.js\n@@ -1 +1 @@\n-not the content\n+x\n"] }));
    expect(stale.status).toBe("ERROR");
    expect(stale.reason).toMatch(/does not apply/);
  });
});

it("keeps reading host files out of reports: a planted junit symlink is not followed", async () => {
  const id = jobId("junit-link");
  const cb = await h.run(h.job(id, {}, { test: { framework: "node-test", command: ["/bin/sh", "-c", "ln -s /etc/passwd /output/junit.xml"], coverage: false } }));
  expect(cb.status).toBe("FAILED");
  expect(cb.reason).toMatch(/no JUnit report/);
  expect(h.worker.uploads.has(`${id}/junit.xml`)).toBe(false);
  expect((await readFile("/etc/passwd", "utf8")).length).toBeGreaterThan(0);
});
