import { closeSync, constants, openSync, type Stats } from "node:fs";
import { lstat, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { join } from "node:path";
import { runTool } from "./run-tool";

/** The reports a test run writes, each through a FIFO of its own. */
export const REPORT_NAMES = ["junit", "lcov"] as const;
export type ReportName = (typeof REPORT_NAMES)[number];

/** How long the runner waits for a report's last bytes once every sandboxed process is gone. */
const DRAIN_MS = 5_000;
/** Writable by the sandbox users, readable by the runner only. */
const FIFO_MODE = 0o622;

export interface ReportText {
  /** What was written, or null when nothing was. */
  bytes: Buffer | null;
  /** Set when more than the cap was written; `bytes` is then null. */
  overflow: boolean;
}

/**
 * FIFOs the test command writes its reports into, in a directory bound read-only into the
 * sandbox. Sandboxed code can add bytes to a report (which makes it invalid), but it cannot
 * replace, truncate, symlink or read it, and nothing it writes into the output directory is
 * taken for a report. The runner holds a write end itself while the command runs, so a report
 * is complete only when the last sandboxed writer is gone.
 */
export class ReportChannel {
  private readonly readers = new Map<ReportName, { done: Promise<ReportText>; keeper: number; socket: Socket }>();

  /**
   * Starts reading the FIFOs in `dir`, making them the first time. The directory is a pool
   * slot's own and is used again by the slot's next test job: a slot runs one job at a time,
   * every process of a job is gone before the next starts, and a FIFO keeps no bytes once all
   * its ends are closed.
   */
  static async open(dir: string, maxBytes: number): Promise<ReportChannel> {
    const channel = new ReportChannel();
    try {
      const paths = REPORT_NAMES.map((name) => join(dir, name));
      const missing: string[] = [];
      for (const path of paths) if (!isReportFifo(await lstat(path).catch(() => null))) missing.push(path);
      if (missing.length > 0) {
        for (const path of missing) await rm(path, { force: true });
        await runTool("mkfifo", ["-m", FIFO_MODE.toString(8), ...missing]);
      }
      for (const name of REPORT_NAMES) {
        const path = join(dir, name);
        const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
        const keeper = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
        const socket = new Socket({ fd, readable: true, writable: false });
        channel.readers.set(name, { done: collect(socket, maxBytes), keeper, socket });
      }
    } catch (err) {
      await channel.close();
      throw err;
    }
    return channel;
  }

  /** The reports as written; call once the command and all its processes have ended. */
  async read(): Promise<Record<ReportName, ReportText>> {
    for (const reader of this.readers.values()) {
      closeSync(reader.keeper);
      reader.keeper = -1;
    }
    const timer = setTimeout(() => {
      for (const reader of this.readers.values()) reader.socket.destroy();
    }, DRAIN_MS);
    const out = {} as Record<ReportName, ReportText>;
    for (const [name, reader] of this.readers) out[name] = await reader.done;
    clearTimeout(timer);
    return out;
  }

  async close(): Promise<void> {
    for (const reader of this.readers.values()) {
      if (reader.keeper >= 0) closeSync(reader.keeper);
      reader.keeper = -1;
      reader.socket.destroy();
      await reader.done;
    }
  }
}

function isReportFifo(stat: Stats | null): boolean {
  return stat !== null && stat.isFIFO() && (stat.mode & 0o777) === FIFO_MODE && stat.uid === process.getuid?.();
}

function collect(socket: Socket, maxBytes: number): Promise<ReportText> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let overflow = false;
    socket.on("data", (chunk: Buffer) => {
      if (overflow) return;
      size += chunk.length;
      if (size > maxBytes) {
        overflow = true;
        chunks.length = 0;
      } else chunks.push(chunk);
    });
    socket.on("error", () => undefined);
    socket.on("close", () => resolve({ bytes: overflow || size === 0 ? null : Buffer.concat(chunks), overflow }));
  });
}
