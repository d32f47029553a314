import { checkRelativePath } from "../../protocol/paths";

export function requireRelativePath(raw: string, what: string): string {
  const verdict = checkRelativePath(raw);
  if (!verdict.ok) throw new UnsafeInputError(`${what}: ${verdict.reason}`);
  return verdict.path;
}

/** Raised for any input the runner refuses to act on; its message becomes the job's reason. */
export class UnsafeInputError extends Error {
  override name = "UnsafeInputError";
}
