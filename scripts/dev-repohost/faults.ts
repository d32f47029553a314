import { z } from "zod";
import { fullRepoName } from "./repo-names.js";

/** Body of POST /_dev/faults. */
export const faultRequest = z.strictObject({
  repo: fullRepoName,
  status: z.union([z.literal(503), z.literal(429), z.literal(403)]),
  count: z.number().int().min(1).max(10_000),
  /** Seconds announced in retry-after and x-ratelimit-reset for 429/403; short by default so retry tests stay fast. */
  retry_after: z.number().int().min(0).max(3600).default(1),
});

export type FaultRequest = z.infer<typeof faultRequest>;

export interface PendingFault {
  repo: string;
  status: 503 | 429 | 403;
  remaining: number;
  retry_after: number;
}

/**
 * Failures queued per repository for tests of retries: each API request for the repository
 * takes the next one until they are used up. Faults queued for one repository run in the
 * order they were added.
 */
export class FaultQueue {
  private readonly pending = new Map<string, PendingFault[]>();

  add(request: FaultRequest): void {
    const repo = `${request.repo.owner}/${request.repo.name}`;
    const queue = this.pending.get(repo) ?? [];
    queue.push({ repo, status: request.status, remaining: request.count, retry_after: request.retry_after });
    this.pending.set(repo, queue);
  }

  /** Uses up one failure for the repository, if one is queued. */
  take(fullName: string): PendingFault | null {
    const queue = this.pending.get(fullName);
    const next = queue?.[0];
    if (!queue || !next) return null;
    next.remaining -= 1;
    if (next.remaining === 0) queue.shift();
    if (queue.length === 0) this.pending.delete(fullName);
    return { ...next };
  }

  list(): PendingFault[] {
    return [...this.pending.values()].flat().map((fault) => ({ ...fault }));
  }

  clear(): void {
    this.pending.clear();
  }
}

/** The response GitHub gives for each injectable failure. */
export function faultResponse(fault: PendingFault, nowSeconds: number, caller: string) {
  if (fault.status === 503) {
    return { headers: {}, message: "Service Unavailable" };
  }
  const headers = {
    "retry-after": String(fault.retry_after),
    "x-ratelimit-remaining": "0",
    "x-ratelimit-reset": String(nowSeconds + fault.retry_after),
  };
  const message =
    fault.status === 429
      ? "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
      : `API rate limit exceeded for ${caller}.`;
  return { headers, message };
}
