import { JOB_PRIORITIES, type JobPriority } from "../../protocol/jobs";

/** Who a job runs for: the pool's fair-share rules count slots by attempt and organization. */
export interface Share {
  priority: JobPriority;
  attemptId: string | null;
  orgId: string | null;
}

export interface ShareRules {
  /** Slots interactive runs never take, so scoring and validation always find one. */
  reservedForScoring: number;
  /** Most slots one attempt's interactive runs hold at once. */
  perAttempt: number;
  /** Slots one organization holds before it must leave the next free one to another that waits. */
  perOrganization: number;
}

/** The documented shares (docs/limits.md) for a pool of `capacity` slots. */
export function shareRules(capacity: number): ShareRules {
  return {
    reservedForScoring: capacity >= 2 ? 1 : 0,
    perAttempt: Math.max(1, Math.floor(capacity / 4)),
    perOrganization: Math.max(1, Math.ceil(capacity / 2)),
  };
}

interface Waiter {
  share: Share;
  seq: number;
  resolve: (slot: number) => void;
  reject: (err: Error) => void;
}

/**
 * A fixed number of numbered slots handed out by priority and fair share rather than
 * arrival: the next free slot goes to the waiting job of the best priority whose organization
 * holds the fewest slots, oldest first, among those its shares allow. The slot number picks
 * the sandbox uid and the job's control group, so two running jobs never share either.
 */
export class SlotPool {
  private readonly free: number[];
  private readonly holders = new Map<number, Share>();
  private readonly waiters: Waiter[] = [];
  private readonly rules: ShareRules;
  private seq = 0;

  constructor(readonly capacity: number) {
    this.free = Array.from({ length: capacity }, (_, i) => i);
    this.rules = shareRules(capacity);
  }

  get running(): number {
    return this.holders.size;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Whether a job may join the pool now, to run or to wait in a backlog of `backlog` places
   * (docs/runner-protocol.md, "Backpressure"). Of the capacity + backlog places, the last is
   * kept for another kind of job and another organization: interactive runs never take it,
   * so a scoring job is always taken; one organization never takes it, so another's job is
   * always taken and, holding fewer slots, starts next. One attempt's interactive runs hold
   * at most their share of slots here; more wait in the Worker's queue.
   */
  admits(share: Share, backlog: number): boolean {
    const admitted = [...this.holders.values(), ...this.waiters.map((w) => w.share)];
    const places = this.capacity + backlog;
    if (admitted.length >= places) return false;
    const kept = places >= 2 ? 1 : 0;
    const count = (match: (s: Share) => boolean) => admitted.filter(match).length;
    if (share.orgId !== null && count((s) => s.orgId === share.orgId) >= places - kept) return false;
    if (share.priority !== "interactive") return true;
    if (count((s) => s.priority === "interactive") >= places - kept) return false;
    return share.attemptId === null || count((s) => s.priority === "interactive" && s.attemptId === share.attemptId) < this.rules.perAttempt;
  }

  /** Aborting `signal` withdraws a caller still waiting (the promise rejects); a slot already handed out stays the caller's. */
  acquire(share: Share, signal?: AbortSignal): Promise<number> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new Error("slot request withdrawn"));
      const withdraw = () => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        reject(new Error("slot request withdrawn"));
        // It may have been the other organization's job another one left a free slot to.
        this.dispatch();
      };
      const waiter: Waiter = {
        share,
        seq: this.seq++,
        resolve: (slot) => {
          signal?.removeEventListener("abort", withdraw);
          resolve(slot);
        },
        reject,
      };
      signal?.addEventListener("abort", withdraw, { once: true });
      this.waiters.push(waiter);
      this.dispatch();
    });
  }

  release(slot: number): void {
    this.holders.delete(slot);
    this.free.push(slot);
    this.dispatch();
  }

  /** Fails every waiting caller with `reason`; running holders keep their slots. */
  rejectWaiting(reason: Error): void {
    for (const w of this.waiters.splice(0)) w.reject(reason);
  }

  private dispatch(): void {
    while (this.free.length > 0) {
      const next = this.pick();
      if (!next) return;
      this.waiters.splice(this.waiters.indexOf(next), 1);
      const slot = this.free.shift() as number;
      this.holders.set(slot, next.share);
      next.resolve(slot);
    }
  }

  private pick(): Waiter | undefined {
    const held = [...this.holders.values()];
    const count = (match: (s: Share) => boolean) => held.filter(match).length;
    const interactive = count((s) => s.priority === "interactive");
    const eligible = this.waiters.filter(({ share }) => {
      if (share.priority !== "interactive") return true;
      if (interactive >= this.capacity - this.rules.reservedForScoring) return false;
      return share.attemptId === null || count((s) => s.priority === "interactive" && s.attemptId === share.attemptId) < this.rules.perAttempt;
    });
    const orgHeld = (w: Waiter) => (w.share.orgId === null ? 0 : count((s) => s.orgId === w.share.orgId));
    // Scoring before task validation before a candidate's interactive runs: the protocol's order.
    const rank = (w: Waiter) => [JOB_PRIORITIES.indexOf(w.share.priority), orgHeld(w), w.seq];
    const sorted = eligible.sort((a, b) => {
      const [ra, rb] = [rank(a), rank(b)];
      for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
      return 0;
    });
    // An organization past its share waits while another organization's job could run instead.
    const withinShare = (w: Waiter) => orgHeld(w) < this.rules.perOrganization;
    return sorted.find((w) => withinShare(w) || !sorted.some((o) => o.share.orgId !== w.share.orgId && withinShare(o)));
  }
}
