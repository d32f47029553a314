import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taskKeys } from "../../src/domain/tasks";
import { OVERLAY_LIMITS } from "../../src/domain/overlay";
import { b64, createAttempt, assignedTask, patchChanges, startedAttempt, signIn } from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";
import { snapshotTarball } from "../support/worker/tarball";

const decode = (b64text: string) => new TextDecoder().decode(Uint8Array.from(atob(b64text), (c) => c.charCodeAt(0)));

describe("GET /attempts/{id}/files and /files/content (the web app's file tree and editor)", () => {
  it("lists the snapshot with the overlay on top, and serves each file as the candidate has it now", async () => {
    const { candidate, attempt, taskId } = await startedAttempt();
    await env.BUCKET.put(taskKeys(taskId).snapshot, await snapshotTarball({ "src/slugify.js": "export const slugify = (s) => s;\n", "README.md": "# slugify\n", "old.txt": "gone\n" }));
    const saved = await patchChanges(candidate, attempt.id, {
      "src/slugify.js": { op: "upsert", content_b64: b64("export const slugify = (s) => s.toLowerCase();\n") },
      "src/new.js": { op: "upsert", content_b64: b64("// new\n") },
      "old.txt": { op: "delete" },
    });
    expect(saved.status).toBe(200);

    const res = await call(`/api/v1/attempts/${attempt.id}/files`, { token: candidate.token });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      attempt_id: attempt.id,
      items: [
        { path: "README.md", origin: "snapshot", changed: false, deleted: false },
        { path: "old.txt", origin: "snapshot", changed: true, deleted: true },
        { path: "src/new.js", origin: "added", changed: true, deleted: false },
        { path: "src/slugify.js", origin: "snapshot", changed: true, deleted: false },
      ],
    });

    const content = async (path: string) => call(`/api/v1/attempts/${attempt.id}/files/content?path=${encodeURIComponent(path)}`, { token: candidate.token });
    const readme = (await (await content("README.md")).json()) as { origin: string; size: number; content_b64: string };
    expect(readme).toMatchObject({ origin: "snapshot", size: 10 });
    expect(decode(readme.content_b64)).toBe("# slugify\n");
    const changed = (await (await content("src/slugify.js")).json()) as { origin: string; content_b64: string };
    expect(changed.origin).toBe("overlay");
    expect(decode(changed.content_b64)).toContain("toLowerCase");

    const deleted = await content("old.txt");
    expect(deleted.status).toBe(404);
    expect((await errorBody(deleted)).detail).toBe(`old.txt was deleted in the changes of attempt ${attempt.id}`);
    const unknown = await content("src/nope.js");
    expect(unknown.status).toBe(404);
    expect((await errorBody(unknown)).detail).toBe(`src/nope.js is not a file of attempt ${attempt.id}`);
  });

  it("refuses a path the overlay rules refuse (422), a file too large to edit (413), and other users (404)", async () => {
    const { candidate, attempt, taskId } = await startedAttempt();
    await env.BUCKET.put(taskKeys(taskId).snapshot, await snapshotTarball({ "big.bin": "x".repeat(OVERLAY_LIMITS.fileBytes + 1) }));
    const traversal = await call(`/api/v1/attempts/${attempt.id}/files/content?path=../etc/passwd`, { token: candidate.token });
    expect(traversal.status).toBe(422);
    expect(((await errorBody(traversal)).detail as { loc: string[] }[])[0]?.loc).toEqual(["query", "path"]);

    const big = await call(`/api/v1/attempts/${attempt.id}/files/content?path=big.bin`, { token: candidate.token });
    expect(big.status).toBe(413);
    expect(String((await errorBody(big)).detail)).toMatch(/larger than \d+ bytes/);

    const stranger = await signIn({ role: "candidate" });
    for (const path of [`/api/v1/attempts/${attempt.id}/files`, `/api/v1/attempts/${attempt.id}/files/content?path=big.bin`]) {
      expect((await call(path, { token: stranger.token })).status).toBe(404);
      expect((await call(path)).status).toBe(401);
    }
  });

  it("GET /attempts/{id}/workspace answers the attempt, its task and its files as their own routes do, in one request", async () => {
    const { candidate, attempt, taskId } = await startedAttempt();
    await env.BUCKET.put(taskKeys(taskId).snapshot, await snapshotTarball({ "src/slugify.js": "export const slugify = (s) => s;\n" }));
    expect((await patchChanges(candidate, attempt.id, { "src/new.js": { op: "upsert", content_b64: b64("// new\n") } })).status).toBe(200);
    const read = async (path: string, token = candidate.token) => {
      const res = await call(path, { token });
      expect(res.status, path).toBe(200);
      return res.json();
    };
    const view = await read(`/api/v1/attempts/${attempt.id}/workspace`);
    expect(view).toEqual({
      attempt: await read(`/api/v1/attempts/${attempt.id}`),
      task: await read(`/api/v1/tasks/${taskId}`),
      files: ((await read(`/api/v1/attempts/${attempt.id}/files`)) as { items: unknown[] }).items,
      score_report: null,
    });
    // The candidate's view of the task: no staff fields.
    expect((view as { task: Record<string, unknown> }).task).not.toHaveProperty("source");
    expect((view as { files: { path: string }[] }).files.map((f) => f.path)).toEqual(["src/new.js", "src/slugify.js"]);

    const stranger = await signIn({ role: "candidate" });
    expect((await call(`/api/v1/attempts/${attempt.id}/workspace`, { token: stranger.token })).status).toBe(404);
    expect((await call(`/api/v1/attempts/${attempt.id}/workspace`)).status).toBe(401);
  });

  it("before the attempt starts the snapshot is there to read", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    await env.BUCKET.put(taskKeys(taskId).snapshot, await snapshotTarball({ "README.md": "# r\n" }));
    const res = await call(`/api/v1/attempts/${attempt.id}/files`, { token: candidate.token });
    expect(((await res.json()) as { items: { path: string }[] }).items.map((i) => i.path)).toEqual(["README.md"]);
  });
});
