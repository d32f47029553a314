import type { Job } from "../../protocol/jobs";
import type { LeasesBody } from "../../protocol/leases";
import { signedHeaders } from "../../protocol/signing";
import type { Logger } from "./log";
import { postSigned, type RetryPolicy } from "./transfer";

/** Where and how often a job's lease is renewed, as the job gave it. */
type Lease = NonNullable<Job["lease"]>;

/** Lease URLs (Workers) a runner keeps beating to; more would be a misconfiguration, not a fleet. */
const MAX_LEASE_URLS = 8;

/**
 * Keeps this runner's hold on its jobs (docs/runner-protocol.md, "Leases"): it sends each
 * lease URL it has been given a signed heartbeat listing the jobs it holds there, as often as
 * the shortest interval asks. The Worker answers which of them are no longer this runner's
 * (finished elsewhere, or given up); `onLost` hears of those. It beats while idle too: each
 * heartbeat also makes the Worker requeue jobs whose runners stopped, so a live runner finds
 * a dead one's work. A job handed back is reported at once, retried like a result, so another
 * runner can take it without waiting for its lease to run out.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Lease>();
  /** Every lease URL seen, most recent last, with the interval it asked for. */
  private readonly urls = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private intervalMs = 0;
  private beating: Promise<void> | null = null;

  constructor(
    readonly runnerId: string,
    private readonly secret: string,
    private readonly retry: RetryPolicy,
    private readonly log: Logger,
    private readonly onLost: (jobIds: string[]) => void,
  ) {}

  hold(jobId: string, lease: Lease): void {
    this.held.set(jobId, lease);
    this.urls.delete(lease.url);
    this.urls.set(lease.url, lease.interval_ms);
    for (const url of [...this.urls.keys()].slice(0, Math.max(0, this.urls.size - MAX_LEASE_URLS))) this.urls.delete(url);
    this.reschedule();
  }

  /** The job's result was delivered (or given up): nothing more to hold. */
  drop(jobId: string): void {
    this.held.delete(jobId);
  }

  /** Hands the job back unfinished; true once the Worker has it. */
  async release(jobId: string, reason: string): Promise<boolean> {
    const lease = this.held.get(jobId);
    if (!lease) return false;
    this.drop(jobId);
    const body: LeasesBody = { runner_id: this.runnerId, held: [], released: [jobId] };
    const { ok: delivered } = await postSigned(lease.url, body, this.secret, this.retry, this.log, { job_id: jobId, purpose: "hand_back" });
    this.log(delivered ? "job_handed_back" : "job_hand_back_failed", { job_id: jobId, reason });
    return delivered;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private reschedule(): void {
    const interval = Math.min(...this.urls.values());
    if (this.timer && interval === this.intervalMs) return;
    this.stop();
    this.intervalMs = interval;
    this.timer = setInterval(() => {
      // One heartbeat at a time: a slow Worker must not pile them up.
      this.beating ??= this.beat().finally(() => (this.beating = null));
    }, interval);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const byUrl = new Map<string, string[]>([...this.urls.keys()].map((url) => [url, []]));
    for (const [jobId, lease] of this.held) byUrl.set(lease.url, [...(byUrl.get(lease.url) ?? []), jobId]);
    await Promise.all(
      [...byUrl].map(async ([url, jobIds]) => {
        const heartbeat: LeasesBody = { runner_id: this.runnerId, held: jobIds, released: [] };
        const body = JSON.stringify(heartbeat);
        try {
          const response = await fetch(url, {
            method: "POST",
            body,
            headers: { "content-type": "application/json", ...(await signedHeaders(this.secret, body)) },
            signal: AbortSignal.timeout(Math.max(this.intervalMs, 1000)),
          });
          if (!response.ok) {
            await response.body?.cancel();
            return this.log("heartbeat_failed", { url, jobs: jobIds.length, outcome: `HTTP ${response.status}` });
          }
          const { lost } = (await response.json()) as { lost?: unknown };
          const ours = new Set(jobIds);
          const gone = Array.isArray(lost) ? lost.filter((id): id is string => typeof id === "string" && ours.has(id)) : [];
          if (gone.length > 0) this.onLost(gone);
        } catch (err) {
          this.log("heartbeat_failed", { url, jobs: jobIds.length, outcome: err instanceof Error ? err.message : String(err) });
        }
      }),
    );
  }
}
