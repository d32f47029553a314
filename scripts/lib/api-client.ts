// A small client of the Assay API, as an integrator would write one: JSON requests with a
// bearer credential, polling with exponential backoff. Used by `npm run demo` and the e2e tests.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { nextClientIp } from "./client-ip";
import { poll } from "./wait";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

export class AssayClient {
  // Each client stands for one user on one machine: its own client IP for the rate limits.
  private readonly ip = nextClientIp();

  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, expect: number[] = [200, 201, 202]): Promise<T> {
    const res = await fetch(`${this.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        "cf-connecting-ip": this.ip,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : null;
    if (!expect.includes(res.status)) throw new ApiError(res.status, parsed, `${method} ${path}`);
    return parsed as T;
  }

  /** Polls `probe` with backoff (0.25 s doubling to 4 s) until it returns a value. */
  poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
    return poll(what, probe, { timeoutMs, intervalMs: 250, maxIntervalMs: 4000 });
  }

  async importTask(prUrl: string, organizationId: string, visibility = "PRIVATE_ORG"): Promise<Task> {
    const created = await this.call<Task>("POST", "/tasks/import-pr", { pr_url: prUrl, visibility, organization_id: organizationId, tags: ["demo"] });
    return this.poll(`task ${created.task_id}`, async () => {
      const task = await this.call<Task>("GET", `/tasks/${created.task_id}`);
      if (task.status === "FAILED") throw new Error(`task ${task.task_id} FAILED: ${task.failure_reason}`);
      return task.status === "READY" ? task : undefined;
    });
  }

  async invite(taskId: string, email: string): Promise<{ invite_id: string }> {
    return this.call("POST", "/invites/candidate", { email, task_id: taskId });
  }

  async accept(token: string): Promise<Record<string, unknown>> {
    return this.call("POST", "/invites/accept", { token });
  }

  async createAttempt(taskId: string): Promise<Attempt> {
    return this.call<Attempt>("POST", "/attempts", { task_id: taskId });
  }

  async start(attemptId: string): Promise<Attempt> {
    return this.call<Attempt>("POST", `/attempts/${attemptId}/start`);
  }

  async save(attemptId: string, files: Record<string, string | null>): Promise<Record<string, unknown>> {
    const changes = Object.fromEntries(
      Object.entries(files).map(([path, content]) => [
        path,
        content === null ? { op: "delete" } : { op: "upsert", content_b64: Buffer.from(content).toString("base64") },
      ]),
    );
    return this.call("PATCH", `/attempts/${attemptId}/changes`, { changes });
  }

  async runTests(attemptId: string, changedFiles: string[]): Promise<Run> {
    const run = await this.call<Run>("POST", `/attempts/${attemptId}/runs`, { changed_files: changedFiles });
    return this.poll(`run ${run.id}`, async () => {
      const now = await this.call<Run>("GET", `/attempts/${attemptId}/runs/${run.id}`);
      return now.status === "queued" || now.status === "RUNNING" ? undefined : now;
    });
  }

  async submit(attemptId: string, payload: Record<string, unknown>): Promise<Attempt> {
    return this.call<Attempt>("POST", `/attempts/${attemptId}/submit`, payload);
  }

  async scoreReport(attemptId: string, timeoutMs?: number): Promise<ScoreReport> {
    return this.poll(
      `score report of ${attemptId}`,
      async () => {
        const report = await this.call<ScoreReport | { detail: string }>("GET", `/attempts/${attemptId}/score-report`, undefined, [200, 404]);
        return "overall_score" in report ? report : undefined;
      },
      timeoutMs,
    );
  }
}

export interface Task {
  task_id: string;
  status: string;
  failure_reason: string | null;
  title: string;
  fail_to_pass?: string[] | null;
}
export interface Attempt {
  id: string;
  status: string;
  score_id: string | null;
}
export interface Run {
  id: string;
  status: string;
  counts?: { total: number; passed: number; failed: number };
  artifact_urls?: { junit: string; logs: string };
}
export interface ScoreReport {
  score_id: string;
  overall_score: number;
  subscores: Record<string, number>;
  evidence: Record<string, Record<string, unknown>>;
  view: "staff" | "candidate";
  /** The staff view's only, like every field below. */
  flags: string[];
  ignored_test_edits: string[];
  excluded_from_hidden_run?: string[];
}

/** The acceptance token of the newest invitation e-mail to `email` in a dev outbox directory. */
export async function invitationToken(outboxDir: string, email: string): Promise<string | undefined> {
  const names = (await readdir(outboxDir).catch(() => [] as string[])).filter((n) => n.endsWith(".json")).sort().reverse();
  for (const name of names) {
    const message = JSON.parse(await readFile(join(outboxDir, name), "utf8")) as { to: string; links: string[] };
    if (message.to.toLowerCase() !== email.toLowerCase()) continue;
    const token = message.links.map((l) => new URL(l).searchParams.get("token")).find(Boolean);
    if (token) return token;
  }
  return undefined;
}
