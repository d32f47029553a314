import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  assign,
  assignedTask,
  attemptStub,
  b64,
  createAttempt,
  openIdeSession,
  seedTask,
  startedAttempt,
  submit,
  type AttemptJson,
  type TestUser,
} from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";

interface IdeSessionJson {
  attempt_id: string;
  session_token: string;
  session_link: string;
  web_link: string;
  expires_at: string;
  active_sessions: number;
}

async function mint(user: TestUser, attemptId: string, body: Record<string, unknown> = {}): Promise<IdeSessionJson> {
  const res = await openIdeSession(user, attemptId, body);
  expect(res.status).toBe(201);
  return (await res.json()) as IdeSessionJson;
}

const sha256Hex = async (text: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");

const revoke = (user: TestUser, attemptId: string, token: string) =>
  call(`/api/v1/attempts/${attemptId}/ide-session/${token}`, { method: "DELETE", token: user.token });

async function expect401(res: Response, detail: RegExp) {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toBe("Bearer");
  expect(String((await errorBody(res)).detail)).toMatch(detail);
}

describe("POST /attempts/{id}/ide-session", () => {
  it("returns a 256-bit token, its deep link and expiry (48 h by default); only its hash is stored", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const res = await openIdeSession(candidate, attempt.id);
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const session = (await res.json()) as IdeSessionJson;
    expect(session.session_token).toMatch(/^assay_ide_[A-Za-z0-9_-]{43}$/);
    expect(session.session_link).toBe(`assay://attempts/${attempt.id}?token=${session.session_token}`);
    expect(session.web_link).toBe(`https://assay.test/ide#attempt=${attempt.id}&token=${session.session_token}`);
    expect(session.attempt_id).toBe(attempt.id);
    expect(session.active_sessions).toBe(1);
    expect(Math.abs(Date.parse(session.expires_at) - (Date.now() + 48 * 3_600_000))).toBeLessThan(60_000);

    const hash = await sha256Hex(session.session_token);
    const row = await env.DB.prepare("SELECT * FROM ide_tokens WHERE attempt_id = ?").bind(attempt.id).first<Record<string, unknown>>();
    expect(row).toMatchObject({ token_hash: hash, expires_at: session.expires_at, revoked_at: null });
    expect(JSON.stringify(row)).not.toContain(session.session_token.slice(10));
    const stored = await runInDurableObject(attemptStub(attempt.id), (_i, state) =>
      state.storage.sql.exec("SELECT * FROM ide_tokens").toArray(),
    );
    expect(stored).toEqual([expect.objectContaining({ token_hash: hash })]);
    expect(JSON.stringify(stored)).not.toContain(session.session_token.slice(10));

    const short = await mint(candidate, attempt.id, { expires_in_hours: 1 });
    expect(Math.abs(Date.parse(short.expires_at) - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    expect(short.session_token).not.toBe(session.session_token);
  });

  it.each([[0], [169], [1.5], ["48"]])("expires_in_hours %j is a 422", async (hours) => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const res = await openIdeSession(candidate, attempt.id, { expires_in_hours: hours });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual(["body", "expires_in_hours"]);
  });

  it("at most 5 active tokens: a sixth is a 409 that says to revoke one; revoking makes room", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) tokens.push((await mint(candidate, attempt.id)).session_token);
    const sixth = await openIdeSession(candidate, attempt.id);
    expect(sixth.status).toBe(409);
    expect(String((await errorBody(sixth)).detail)).toMatch(
      new RegExp(`already has 5 active IDE session tokens; revoke one with DELETE /api/v1/attempts/${attempt.id}/ide-session/\\{token\\}`),
    );
    expect((await revoke(candidate, attempt.id, tokens[0]!)).status).toBe(204);
    expect((await mint(candidate, attempt.id)).active_sessions).toBe(5);
  });

  it("concurrent requests never make more than 5 active tokens", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const responses = await Promise.all(Array.from({ length: 8 }, () => openIdeSession(candidate, attempt.id)));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 409, 409, 409]);
  });

  it("only the attempt's candidate, and not after submission", async () => {
    const { candidate, interviewer, attempt } = await startedAttempt();
    expect((await openIdeSession(interviewer, attempt.id)).status).toBe(403);
    const stranger = { token: (await assignedTask()).candidate.token, id: "" };
    expect((await openIdeSession(stranger, attempt.id)).status).toBe(404);
    expect((await submit(candidate.token, attempt.id)).status).toBe(202);
    const res = await openIdeSession(candidate, attempt.id);
    expect(res.status).toBe(409);
    expect(String((await errorBody(res)).detail)).toMatch(/locked/);
  });
});

describe("IDE session tokens as credentials", () => {
  it("start and submit an attempt with no JWT", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const { session_token: token } = await mint(candidate, attempt.id);

    const started = await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token });
    expect(started.status).toBe(200);
    expect(((await started.json()) as AttemptJson).status).toBe("IN_PROGRESS");
    const submitted = await submit(token, attempt.id, { tests_passed: 2, tests_total: 2, coverage: 0.5, lint_score: 0.9 });
    expect(submitted.status).toBe(202);
    expect(((await submitted.json()) as AttemptJson).status).toBe("SUBMITTED");
  });

  it("every endpoint the spec does not open to IDE tokens refuses one with 401", async () => {
    const { candidate, attempt } = await startedAttempt();
    const { session_token: token } = await mint(candidate, attempt.id);
    const base = `/api/v1/attempts/${attempt.id}`;
    const refused: [string, string, unknown?][] = [
      ["GET", "/api/v1/me"],
      ["GET", "/api/v1/attempts"],
      ["POST", "/api/v1/attempts", { task_id: attempt.task_id }],
      ["GET", base],
      ["GET", `${base}/changes`],
      ["PATCH", `${base}/changes`, { changes: { "a.js": { op: "upsert", content_b64: b64("x") } } }],
      ["POST", `${base}/ide-session`, {}],
      ["DELETE", `${base}/ide-session/${token}`],
      ["GET", `/api/v1/organizations/${attempt.organization_id}`],
      ["GET", `/api/v1/tasks/${attempt.task_id}`],
    ];
    for (const [method, path, body] of refused) {
      await expect401(await call(path, { method, token, body }), /IDE session tokens are not accepted on this endpoint/);
    }
    // Refused before anything changed.
    const overlay = (await (await call(`${base}/changes`, { token: candidate.token })).json()) as { files: number };
    expect(overlay.files).toBe(0);
    expect((await call(`${base}/ide-session/${token}`, { method: "DELETE", token: candidate.token })).status).toBe(204);
  });

  it("a token of attempt A cannot act on attempt B", async () => {
    const a = await startedAttempt();
    const b = await startedAttempt();
    const { session_token: tokenA } = await mint(a.candidate, a.attempt.id);
    await expect401(await submit(tokenA, b.attempt.id), /for another attempt/);
    await expect401(await call(`/api/v1/attempts/${b.attempt.id}/start`, { method: "POST", token: tokenA }), /for another attempt/);
    // Not even on another attempt of the same candidate.
    const otherTask = await seedTask(a.interviewer, a.orgId);
    await assign(otherTask, a.candidate);
    const other = await createAttempt(a.candidate, otherTask);
    await expect401(await call(`/api/v1/attempts/${other.id}/start`, { method: "POST", token: tokenA }), /for another attempt/);
    const bNow = (await (await call(`/api/v1/attempts/${b.attempt.id}`, { token: b.candidate.token })).json()) as AttemptJson;
    expect(bNow.status).toBe("IN_PROGRESS");
  });

  it("revoked, expired, unknown or malformed tokens: 401", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const startPath = `/api/v1/attempts/${attempt.id}/start`;

    const revoked = (await mint(candidate, attempt.id)).session_token;
    expect((await revoke(candidate, attempt.id, revoked)).status).toBe(204);
    expect((await revoke(candidate, attempt.id, revoked)).status).toBe(204);
    await expect401(await call(startPath, { method: "POST", token: revoked }), /has been revoked/);

    const expired = (await mint(candidate, attempt.id, { expires_in_hours: 1 })).session_token;
    const past = new Date(Date.now() - 1000).toISOString();
    const hash = await sha256Hex(expired);
    await env.DB.prepare("UPDATE ide_tokens SET expires_at = ? WHERE token_hash = ?").bind(past, hash).run();
    await runInDurableObject(attemptStub(attempt.id), (_i, state) => {
      state.storage.sql.exec("UPDATE ide_tokens SET expires_at = ? WHERE token_hash = ?", past, hash);
    });
    await expect401(await call(startPath, { method: "POST", token: expired }), /has expired/);

    await expect401(await call(startPath, { method: "POST", token: `assay_ide_${"A".repeat(43)}` }), /Invalid IDE session token/);
    await expect401(await call(startPath, { method: "POST", token: "assay_ide_short" }), /Invalid IDE session token/);
    expect(((await (await call(`/api/v1/attempts/${attempt.id}`, { token: candidate.token })).json()) as AttemptJson).status).toBe(
      "NOT_STARTED",
    );
  });

  it("the attempt's object has the last word: a revocation D1 has not seen yet still refuses the token", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const { session_token: token } = await mint(candidate, attempt.id);
    expect((await revoke(candidate, attempt.id, token)).status).toBe(204);
    await env.DB.prepare("UPDATE ide_tokens SET revoked_at = NULL WHERE attempt_id = ?").bind(attempt.id).run();
    await expect401(await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token }), /has been revoked/);
  });

  it("DELETE is idempotent, for the candidate only, and checks the token's form", async () => {
    const { candidate, interviewer, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const { session_token: token } = await mint(candidate, attempt.id);
    expect((await revoke(interviewer, attempt.id, token)).status).toBe(403);
    expect((await revoke(candidate, attempt.id, `assay_ide_${"B".repeat(43)}`)).status).toBe(204);
    const bad = await revoke(candidate, attempt.id, "not-a-token");
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual(["path", "token"]);
    expect((await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token })).status).toBe(200);
  });
});
