/** A new random id with its type's prefix, e.g. `att_3f0c…`: 32 hex digits of a UUIDv4 after `prefix_`. */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}
