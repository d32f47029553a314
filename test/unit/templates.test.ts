import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectArchive } from "../../sandbox-runner/src/archive";
import { buildCatalogue, CATALOGUE_FILE, serializeCatalogue, TEMPLATES_DIR } from "../../scripts/templates/catalogue";
import { writeTar } from "../../scripts/templates/tar";
import { splitPatch } from "../../src/domain/patch-split";
import { parsePullRequestUrl } from "../../src/domain/pr-url";
import { TEMPLATE_SOURCE_HOST, templateCopyRetryAfterSeconds, templateCopyWindowStart } from "../../src/domain/templates";
import { testFileOf } from "../../src/domain/test-outcomes";
import { RepoHostError } from "../../src/services/repohost/repohost-errors";
import { readTarFiles } from "../../src/services/repohost/tar";
import { TEMPLATES, type Catalogue } from "../../src/services/templates/catalogue";
import { TemplateRepoHost } from "../../src/services/templates/template-repo-host";

const exec = promisify(execFile);
const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "templates-test-"));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** Every file under `dir`, relative, with its content. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, full), await readFile(full, "utf8"));
  }
  return files;
}

describe("the catalogue bundle", () => {
  it("is exactly what templates/ builds (run npm run templates:build after changing a template)", async () => {
    const built = await buildCatalogue();
    const committed = JSON.parse(await readFile(CATALOGUE_FILE, "utf8")) as Catalogue;
    // gzip's bytes may differ between zlib versions for the same input; the archive inside may not.
    const unzipped = (c: Catalogue) =>
      c.templates.map((t) => ({ ...t, tarball: gunzipSync(Buffer.from(t.tarball, "base64")).toString("base64") }));
    expect(unzipped(committed)).toEqual(unzipped(built));
    expect(committed.about).toBe(built.about);
    expect(serializeCatalogue(committed)).toBe(await readFile(CATALOGUE_FILE, "utf8"));
  });

  it("builds the same bytes twice", async () => {
    const [a, b] = [await buildCatalogue(), await buildCatalogue()];
    expect(serializeCatalogue(a)).toBe(serializeCatalogue(b));
  });

  it("holds at least four templates in JavaScript and Python, each with 2 to 5 FAIL_TO_PASS tests", () => {
    expect(TEMPLATES.length).toBeGreaterThanOrEqual(4);
    expect(new Set(TEMPLATES.map((t) => t.language))).toEqual(new Set(["javascript", "python"]));
    expect(TEMPLATES.map((t) => t.slug)).toEqual(TEMPLATES.map((t) => t.slug).sort());
    for (const t of TEMPLATES) {
      expect(t.fail_to_pass.length, t.slug).toBeGreaterThanOrEqual(2);
      expect(t.fail_to_pass.length, t.slug).toBeLessThanOrEqual(5);
      expect(t.pass_to_pass.length, t.slug).toBeGreaterThan(0);
    }
  });

  it.each(TEMPLATES.map((t) => [t.slug, t] as const))(
    "%s: the runner accepts its tarball, and its test and solution patches apply to it and give base + head",
    async (slug, template) => {
      const archive = path.join(workDir, `${slug}.tar.gz`);
      await writeFile(archive, Buffer.from(template.tarball, "base64"));
      const policy = { stripTopLevel: true, maxBytes: 1024 ** 3, maxEntries: 10_000, systemLinkPrefixes: [], packedByRunner: false };
      expect((await inspectArchive(archive, policy)).strip).toBe(1);

      const split = splitPatch(template.diff);
      if (!split.ok) throw new Error(split.reason);
      const testFiles = split.value.files.filter((f) => f.kind === "test").map((f) => f.path);
      for (const id of template.fail_to_pass) expect(testFiles, id).toContain(testFileOf(id));
      expect(split.value.solutionPatch).not.toMatch(/^\+\+\+ b\/tests?\//m);

      const tree = path.join(workDir, slug);
      await mkdir(tree, { recursive: true });
      await tar.x({ file: archive, cwd: tree, strip: 1 });
      expect(await filesUnder(tree)).toEqual(await filesUnder(path.join(TEMPLATES_DIR, slug, "base")));
      for (const patch of [split.value.testPatch, split.value.solutionPatch]) {
        const file = path.join(workDir, `${slug}.patch`);
        await writeFile(file, patch);
        await exec("git", ["apply", file], { cwd: tree, env: gitEnv });
      }
      const expected = new Map([
        ...(await filesUnder(path.join(TEMPLATES_DIR, slug, "base"))),
        ...(await filesUnder(path.join(TEMPLATES_DIR, slug, "head"))),
      ]);
      expect(await filesUnder(tree)).toEqual(expected);
    },
  );
});

describe("the tar writer", () => {
  it("writes sorted entries with fixed owner, time and mode, a directory entry for each folder, and long names in the prefix", async () => {
    const long = `${"a".repeat(80)}/${"b".repeat(60)}/c.txt`;
    const bytes = writeTar("top", [
      { path: "z.txt", content: new TextEncoder().encode("z\n") },
      { path: long, content: new TextEncoder().encode("long\n") },
      { path: "bin/run", content: new TextEncoder().encode("#!/bin/sh\n"), executable: true },
    ]);
    const entries: { path: string; mode: number; mtime: number; uid: number; type: string }[] = [];
    const parser = new tar.Parser({ strict: true, onReadEntry: (e) => {
      entries.push({ path: e.path, mode: e.mode ?? 0, mtime: e.mtime?.getTime() ?? 0, uid: e.uid ?? -1, type: e.type });
      e.resume();
    } });
    parser.end(Buffer.from(bytes));
    expect(entries.map((e) => e.path)).toEqual([
      "top/",
      `top/${"a".repeat(80)}/`,
      `top/${"a".repeat(80)}/${"b".repeat(60)}/`,
      `top/${long}`,
      "top/bin/",
      "top/bin/run",
      "top/z.txt",
    ]);
    expect(new Set(entries.map((e) => e.mtime))).toEqual(new Set([Date.UTC(2024, 0, 1)]));
    expect(new Set(entries.map((e) => e.uid))).toEqual(new Set([0]));
    expect(entries.find((e) => e.path === "top/bin/run")?.mode).toBe(0o755);
    expect(entries.find((e) => e.path === "top/z.txt")?.mode).toBe(0o644);
    const read = await readTarFiles(new Blob([bytes]).stream(), new Set([long, "z.txt"]), {
      stripComponents: 1,
      maxFileBytes: 1024,
      maxStreamBytes: 1024 * 1024,
    });
    expect(new TextDecoder().decode(read.get(long))).toBe("long\n");
  });

  it("refuses paths it cannot write faithfully", () => {
    expect(() => writeTar("top", [{ path: "../x", content: new Uint8Array() }])).toThrow(/relative/);
    expect(() => writeTar("top", [{ path: "é.txt", content: new Uint8Array() }])).toThrow(/ASCII/);
    expect(() => writeTar("top", [{ path: "x".repeat(120), content: new Uint8Array() }])).toThrow(/too long/);
  });
});

describe("the template repo host", () => {
  const template = TEMPLATES[0]!;
  const host = new TemplateRepoHost(template.slug);

  it("reads the template as pull request 1 of its own repository, base and head being its tree ids", async () => {
    const pr = await host.getPullRequest(1);
    expect(pr).toMatchObject({
      number: 1,
      title: template.title,
      body: template.statement.body,
      base: { sha: template.base_commit },
      head: { sha: template.head_commit },
      repository: { fullName: `assay-templates/${template.slug}`, private: false },
    });
    const files = await host.listPullRequestFiles(1);
    expect(files.length).toBe(pr.changedFiles);
    expect(files.reduce((n, f) => n + f.additions, 0)).toBe(pr.additions);
    expect(new TextDecoder().decode(await host.getPullRequestDiff(1))).toBe(template.diff);
  });

  it("serves the base tarball and files in it; nothing at other commits or numbers", async () => {
    const tarball = await host.downloadTarball(template.base_commit);
    const bytes = new Uint8Array(await new Response(tarball.stream).arrayBuffer());
    expect(bytes.byteLength).toBe(tarball.size);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const base = await host.getFileContents(template.base_commit, ["package.json", "README.md", "missing.txt"]);
    const readme = await readFile(path.join(TEMPLATES_DIR, template.slug, "base", "README.md"), "utf8");
    expect(new TextDecoder().decode(base.get("README.md"))).toBe(readme);
    expect(base.has("missing.txt")).toBe(false);

    const kind = async (p: Promise<unknown>) => ((await p.then(() => null, (e: unknown) => e)) as RepoHostError).kind;
    expect(await kind(host.downloadTarball(template.head_commit))).toBe("not_found");
    expect(await kind(host.getPullRequest(2))).toBe("not_found");
    expect(await kind(host.getIssue(1))).toBe("not_found");
    expect(await kind(new TemplateRepoHost("no-such-template").getPullRequest(1))).toBe("not_found");
    expect(await kind(host.getPullRequestDiff(1, { maxBytes: 10 }))).toBe("too_large");
  });
});

describe("template copies", () => {
  it("come from a source host no pull request URL can name, even one configured as an enterprise host", () => {
    const parsed = parsePullRequestUrl("https://templates.assay.invalid/assay-templates/x/pull/1", [TEMPLATE_SOURCE_HOST]);
    expect(parsed.ok && parsed.value.host).toBe("templates.assay.invalid");
    expect(parsed.ok && parsed.value.host).not.toBe(TEMPLATE_SOURCE_HOST);
    expect(parsePullRequestUrl("https://templates.assay.invalid/assay-templates/x/pull/1", []).ok).toBe(false);
  });

  it("count within the last 60 seconds, and wait until the oldest leaves that window", () => {
    const now = new Date("2026-01-01T00:01:00.000Z");
    expect(templateCopyWindowStart(now)).toBe("2026-01-01T00:00:00.000Z");
    expect(templateCopyRetryAfterSeconds("2026-01-01T00:00:10.000Z", now)).toBe(10);
    expect(templateCopyRetryAfterSeconds("2026-01-01T00:00:10.500Z", now)).toBe(11);
    expect(templateCopyRetryAfterSeconds("2026-01-01T00:00:00.001Z", now)).toBe(1);
    expect(templateCopyRetryAfterSeconds(undefined, now)).toBe(1);
  });
});
