import { closeSync, constants, openSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { Socket } from "node:net";
import { join } from "node:path";
import { runTool } from "./run-tool";

/** The reports a test run writes, each through a FIFO of its own. */
export const REPORT_NAMES = ["junit", "lcov"] as const;
export type ReportName = (typeof REPORT_NAMES)[number];

/** How long the runner waits for a report's last bytes once every sandboxed process is gone. */
const DRAIN_MS = 5_000;

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

  private constructor(readonly dir: string) {}

  static async open(dir: string, maxBytes: number): Promise<ReportChannel> {
    await mkdir(dir, { mode: 0o755 });
    const channel = new ReportChannel(dir);
    try {
      for (const name of REPORT_NAMES) {
        const path = join(dir, name);
        // Writable by the sandbox users, readable by the runner only.
        await runTool("mkfifo", ["-m", "622", path]);
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
    const out = {} as Record<ReportName, ReportText>;
    for (const [name, reader] of this.readers) {
      closeSync(reader.keeper);
      reader.keeper = -1;
      const timer = setTimeout(() => reader.socket.destroy(), DRAIN_MS);
      out[name] = await reader.done;
      clearTimeout(timer);
    }
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
