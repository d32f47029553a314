function tarHeader(name: string, size: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (text: string, at: number) => header.set(new TextEncoder().encode(text), at);
  const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, "0")}\0`;
  put(name, 0);
  put(octal(0o644, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(size, 12), 124);
  put(octal(1_700_000_000, 12), 136);
  put("        ", 148);
  put("0", 156);
  put("ustar\u000000", 257);
  const sum = header.reduce((n, b) => n + b, 0);
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return header;
}

/** A gzipped tarball of `files` under one top-level folder, as GitHub serves a repository's snapshot. */
export async function snapshotTarball(files: Record<string, string>): Promise<ArrayBuffer> {
  const parts: Uint8Array[] = [];
  for (const [path, content] of Object.entries(files)) {
    const body = new TextEncoder().encode(content);
    parts.push(tarHeader(`acme-slugify-0123abc/${path}`, body.length), body, new Uint8Array((512 - (body.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  return new Response(new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
}

