/**
 * A fixed number of numbered slots; callers beyond it wait in FIFO order. The slot number
 * picks the sandbox uid, so two running jobs never share one.
 */
export class SlotPool {
  private readonly free: number[];
  private readonly waiters: Array<{ resolve: (slot: number) => void; reject: (err: Error) => void }> = [];

  constructor(readonly capacity: number) {
    this.free = Array.from({ length: capacity }, (_, i) => i);
  }

  get running(): number {
    return this.capacity - this.free.length;
  }

  get queued(): number {
    return this.waiters.length;
  }

  acquire(): Promise<number> {
    const slot = this.free.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  release(slot: number): void {
    const next = this.waiters.shift();
    if (next) next.resolve(slot);
    else this.free.push(slot);
  }

  /** Fails every waiting caller with `reason`; running holders keep their slots. */
  rejectWaiting(reason: Error): void {
    for (const w of this.waiters.splice(0)) w.reject(reason);
  }
}
