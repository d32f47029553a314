/**
 * Keeps the first `limit` bytes of a process's combined output and counts the rest, so a
 * flood of output costs the runner no memory beyond the limit.
 */
export class OutputCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  append(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const slice = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(Buffer.from(slice));
    this.kept += slice.length;
  }

  get truncated(): boolean {
    return this.total > this.limit;
  }

  /** The kept output plus, when output was cut, a line saying how much was dropped. */
  render(): Buffer {
    const body = Buffer.concat(this.chunks);
    if (!this.truncated) return body;
    const note = `\n[assay-runner] output truncated: kept ${this.kept} of ${this.total} bytes (limit ${this.limit})\n`;
    return Buffer.concat([body, Buffer.from(note)]);
  }
}

export function tail(buffer: Buffer, bytes: number): string {
  const slice = buffer.length <= bytes ? buffer : buffer.subarray(buffer.length - bytes);
  return slice.toString("utf8").replace(/^\uFFFD+/, "");
}
