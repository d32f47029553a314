// Rate limits are per client IP, and a test file, a demo run or a bench each stands for
// clients of their own. Each module instance (one per test file's process or isolate) draws
// 48 random bits under the documentation prefix 2001:db8::/32, so two instances never share
// an address by restarting the same counter, as fixed IPv4 ranges did.
const words = crypto.getRandomValues(new Uint16Array(3));
const prefix = `2001:db8:${[...words].map((w) => w.toString(16)).join(":")}`;
let counter = 0;

/** A client address no other client of this or any other process uses. */
export function nextClientIp(): string {
  counter += 1;
  return `${prefix}::${counter.toString(16)}`;
}
