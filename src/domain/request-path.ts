const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * The one spelling of a request path that routing and rate limits both see. The router
 * tolerates a trailing slash and a rate-limit pattern would not, so a client could reach a
 * route without meeting its limit; every variant of a path is mapped to one form instead:
 * escapes of unreserved characters decoded (RFC 3986, 6.2.2.2; `%2F` and other reserved
 * escapes stay, a storage key is one segment with `/` as `%2F`), other escapes in upper case,
 * runs of `/` as one, no trailing `/`. Dot segments, escaped ones included, are already
 * resolved by the URL parser.
 */
export function canonicalPath(pathname: string): string {
  const decoded = pathname.replace(ESCAPE, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : escape.toUpperCase();
  });
  const collapsed = decoded.replace(/\/{2,}/g, "/");
  return collapsed.length > 1 ? collapsed.replace(/\/$/, "") : collapsed;
}
