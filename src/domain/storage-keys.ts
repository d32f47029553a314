/** Longest object key the service writes; R2 allows 1024 bytes, this leaves room for prefixes. */
export const MAX_STORAGE_KEY_LENGTH = 512;

const SEGMENT = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Why `key` is not an acceptable object key, or undefined when it is. Keys are built by the
 * service, never taken from clients, but the storage route decodes one from every URL; this
 * narrow alphabet also means a key needs no escaping in any signer's canonical form.
 */
export function storageKeyProblem(key: string): string | undefined {
  if (key.length === 0 || key.length > MAX_STORAGE_KEY_LENGTH) {
    return `an object key is 1–${MAX_STORAGE_KEY_LENGTH} characters`;
  }
  for (const segment of key.split("/")) {
    if (!SEGMENT.test(segment)) {
      return "an object key is segments of 1–128 letters, digits, '.', '_' or '-' separated by single '/'";
    }
    if (segment === "." || segment === "..") return "an object key has no '.' or '..' segments";
  }
  return undefined;
}

/**
 * `Content-Disposition` of a served object: always an attachment, since artifacts are files a
 * candidate's code may have written, to be saved by a browser and never rendered. The file
 * name is the key's last segment, whose alphabet needs no quoting or escaping in a header.
 */
export function attachmentDisposition(key: string): string {
  return `attachment; filename="${key.slice(key.lastIndexOf("/") + 1)}"`;
}
