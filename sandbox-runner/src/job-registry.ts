import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { JobStatus } from "../../protocol/jobs";

/** An id's state: live while queued or running (never forgotten then), then how it ended. */
type Tracked<Final extends string> = "queued" | "running" | Final;
export type JobState = Tracked<JobStatus>;

/**
 * Remembers job (or execution) ids so a replayed request changes nothing. Ids are kept on
 * disk for longer than the signature window: an older replay is already refused by its stale
 * timestamp, so this also covers a runner restart.
 */
export class JobRegistry<Final extends string = JobStatus> {
  private readonly states = new Map<string, { state: Tracked<Final>; at: number }>();

  constructor(
    private readonly dir: string,
    private readonly memoryMs: number,
  ) {}

  /**
   * Loads the ids that ended in the last hour. Only an ended id reaches the disk: one still
   * queued or running when the previous process died is unknown here, so that when the Worker
   * offers it again (its lease ran out) it runs rather than being answered as already running.
   */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const cutoff = Date.now() - this.memoryMs;
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => null);
      if (!info || info.mtimeMs < cutoff) {
        await rm(path, { force: true });
        continue;
      }
      const state = (await readFile(path, "utf8").catch(() => "ERROR")) as Final;
      this.states.set(name.replace(/\.state$/, ""), { state, at: info.mtimeMs });
    }
  }

  /** Forgets an id whose job this runner gave up unfinished (never on disk), so that a new offer of it runs. */
  forget(jobId: string): void {
    this.states.delete(jobId);
  }

  get(jobId: string): Tracked<Final> | null {
    return this.states.get(jobId)?.state ?? null;
  }

  /** Records a new id; false when the id was already known. */
  async claim(jobId: string): Promise<boolean> {
    this.prune();
    if (this.states.has(jobId)) return false;
    await this.set(jobId, "queued");
    return true;
  }

  async set(jobId: string, state: Tracked<Final>): Promise<void> {
    this.states.set(jobId, { state, at: Date.now() });
    if (state === "queued" || state === "running") return;
    await writeFile(join(this.dir, `${jobId}.state`), state);
  }

  private prune(): void {
    const cutoff = Date.now() - this.memoryMs;
    for (const [id, s] of this.states) {
      if (s.at < cutoff && s.state !== "queued" && s.state !== "running") {
        this.states.delete(id);
        void rm(join(this.dir, `${id}.state`), { force: true });
      }
    }
  }
}
