/**
 * Validation of pull request URLs (docs/tasks-from-prs.md, "Pull request URLs").
 *
 * The URL is parsed by hand instead of with `new URL()`: the WHATWG parser normalizes what
 * it reads (it drops tabs and newlines anywhere, maps full-width letters to ASCII, reads
 * "127.1" or "0x7f.1" as 127.0.0.1, treats "\" as "/"), so a string that does not look like
 * an allowed host could still parse into one, and the reverse. Here the text must already be
 * in the one canonical form, and the API base is built from the configuration, never from
 * the user's text.
 */

export interface PullRequestRef {
  /** Host as configured, lower case, with the port when it is not the scheme's default. */
  host: string;
  /** REST API root: https://api.github.com, or <origin>/api/v3 for GitHub Enterprise. */
  apiBase: string;
  owner: string;
  repo: string;
  number: number;
  /** The canonical browser URL, without any tab, query or fragment the input had. */
  htmlUrl: string;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** What a URL names: a pull request (…/pull/N) or an issue (…/issues/N) of a repository. */
interface ItemKind {
  noun: string;
  /** The noun with its article, as a sentence uses it. */
  one: string;
  segment: string;
  /** Tabs of the item's page that still name the same item. */
  tabs: ReadonlySet<string>;
}

const PULL: ItemKind = { noun: "pull request", one: "a pull request", segment: "pull", tabs: new Set(["files", "commits", "checks"]) };
const ISSUE: ItemKind = { noun: "issue", one: "an issue", segment: "issues", tabs: new Set() };

/** A configured repo host origin, as the parser compares against it. */
export interface HostOrigin {
  scheme: "http" | "https";
  /** Lower case, IPv6 literals with their brackets. */
  hostname: string;
  port: number;
  origin: string;
  apiBase: string;
}

const GITHUB: HostOrigin = {
  scheme: "https",
  hostname: "github.com",
  port: 443,
  origin: "https://github.com",
  apiBase: "https://api.github.com",
};

const MAX_URL_LENGTH = 2048;
/** GitHub's numbers fit in 32 bits; nine digits keeps arithmetic and storage unremarkable. */
export const MAX_PULL_NUMBER = 999_999_999;

const DEFAULT_PORTS = { http: 80, https: 443 } as const;

/** GitHub's owner names: letters, digits, "-" and (GitHub Enterprise) "_", not starting with "-" or "_". */
const OWNER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$/;
/** GitHub's repository names: letters, digits, ".", "-", "_", at most 100 ("." and ".." are refused as dot segments). */
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
const NUMBER = /^[1-9][0-9]{0,8}$/;

const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV4 = /^(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;

const expectedForm = (kind: ItemKind) => `https://github.com/OWNER/REPO/${kind.segment}/NUMBER`;

interface Authority {
  hostname: string;
  /** The port as written, or null when none was. */
  port: string | null;
}

/** Splits "host[:port]"; null when it is not of that shape (the caller has already refused "@"). */
function splitAuthority(authority: string): Authority | null {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::([^:]*))?$/.exec(authority);
  if (!match) return null;
  return { hostname: (match[1] ?? "").toLowerCase(), port: match[2] ?? null };
}

function isIpLiteral(hostname: string): boolean {
  return IPV4.test(hostname) || IPV6.test(hostname) || /^[0-9.]+$/.test(hostname) || /^0x/i.test(hostname);
}

/**
 * Reads one configured GitHub Enterprise origin ("https://ghe.example.com", or for local
 * development "http://127.0.0.1:8790"). A malformed entry is the operator's mistake, not the
 * user's, so it throws rather than turning into a reason shown to users.
 */
export function parseEnterpriseHost(entry: string): HostOrigin {
  const match = /^(https?):\/\/([^/?#@\s\\]+)\/?$/i.exec(entry.trim());
  const authority = match ? splitAuthority(match[2] ?? "") : null;
  if (!match || !authority) throw new Error(`invalid GitHub Enterprise host "${entry}": expected an origin such as https://ghe.example.com`);
  const scheme = (match[1] ?? "").toLowerCase() as "http" | "https";
  const { hostname } = authority;
  if (!(HOSTNAME.test(hostname) || IPV4.test(hostname) || IPV6.test(hostname))) {
    throw new Error(`invalid GitHub Enterprise host "${entry}": "${hostname}" is not a host name or IP address`);
  }
  if (hostname === GITHUB.hostname) throw new Error(`invalid GitHub Enterprise host "${entry}": github.com is always allowed`);
  let port: number = DEFAULT_PORTS[scheme];
  if (authority.port !== null) {
    if (!/^[1-9][0-9]{0,4}$/.test(authority.port) || Number(authority.port) > 65535) {
      throw new Error(`invalid GitHub Enterprise host "${entry}": bad port`);
    }
    port = Number(authority.port);
  }
  const hostPort = port === DEFAULT_PORTS[scheme] ? hostname : `${hostname}:${port}`;
  const origin = `${scheme}://${hostPort}`;
  return { scheme, hostname, port, origin, apiBase: `${origin}/api/v3` };
}

function allowedHostsText(hosts: HostOrigin[]): string {
  return hosts.map((h) => h.origin.replace(/^https:\/\//, "")).join(", ");
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/**
 * Checks that `input` is the URL of a pull request on github.com or on one of
 * `enterpriseHosts`, and gives the API coordinates to read it from. Nothing is fetched.
 */
export function parsePullRequestUrl(input: string, enterpriseHosts: string[]): ParseResult<PullRequestRef> {
  return parseItemUrl(input, enterpriseHosts, PULL);
}

/** The same checks for the URL of an issue (…/OWNER/REPO/issues/NUMBER); `number` is the issue's. */
export function parseIssueUrl(input: string, enterpriseHosts: string[]): ParseResult<PullRequestRef> {
  return parseItemUrl(input, enterpriseHosts, ISSUE);
}

function parseItemUrl(input: string, enterpriseHosts: string[], kind: ItemKind): ParseResult<PullRequestRef> {
  const hosts = [GITHUB, ...enterpriseHosts.map(parseEnterpriseHost)];
  const allowed = allowedHostsText(hosts);
  // Surrounding ASCII whitespace is what copy and paste adds; anywhere else it is refused below.
  const text = input.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "");

  if (text === "") return fail(`The ${kind.noun} URL is empty; paste a URL such as ${expectedForm(kind)}.`);
  if (text.length > MAX_URL_LENGTH) return fail(`The ${kind.noun} URL is longer than ${MAX_URL_LENGTH} characters; ${kind.one} URL is much shorter.`);
  if (/[^\x21-\x7e]/.test(text)) {
    return fail(
      `The ${kind.noun} URL contains spaces, control characters or characters outside plain ASCII ` +
        "(look-alike letters are not accepted); type the URL as GitHub shows it.",
    );
  }
  if (text.includes("\\")) return fail(`The ${kind.noun} URL contains a backslash ("\\"); URLs use "/" only.`);

  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text);
  if (!schemeMatch) return fail(`The ${kind.noun} URL must be a full https:// address such as ${expectedForm(kind)}.`);
  const scheme = (schemeMatch[1] ?? "").toLowerCase();
  if (scheme !== "https" && scheme !== "http") {
    return fail(`The ${kind.noun} URL must start with https:// (not ${scheme}:); for example ${expectedForm(kind)}.`);
  }
  const rest = text.slice(schemeMatch[0].length);
  if (!rest.startsWith("//")) return fail(`The ${kind.noun} URL must start with ${scheme}:// followed by the host; for example ${expectedForm(kind)}.`);

  const parts = /^\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/.exec(rest);
  if (!parts) return fail(`The ${kind.noun} URL could not be read; use the form ${expectedForm(kind)}.`);
  const authorityText = parts[1] ?? "";
  const path = parts[2] ?? "";

  if (authorityText.includes("@")) {
    return fail(`The ${kind.noun} URL must not contain a user name or password (the part before "@"); remove it.`);
  }
  if (authorityText.includes("%")) return fail(`The host of the ${kind.noun} URL must not be percent-encoded.`);
  const authority = splitAuthority(authorityText);
  if (!authority || authority.hostname === "") return fail(`The ${kind.noun} URL has no valid host; use the form ${expectedForm(kind)}.`);

  const candidates = hosts.filter((h) => h.hostname === authority.hostname);
  if (candidates.length === 0) {
    if (isIpLiteral(authority.hostname)) {
      return fail(`The ${kind.noun} URL's host is an IP address (${authority.hostname}); only ${kind.noun}s on ${allowed} can be imported.`);
    }
    return fail(`Only ${kind.noun}s on ${allowed} can be imported; "${authority.hostname}" is not one of these hosts.`);
  }
  const sameScheme = candidates.filter((h) => h.scheme === scheme);
  if (sameScheme.length === 0) {
    const wanted = candidates[0]?.scheme ?? "https";
    return fail(`${capitalize(kind.noun)}s on ${authority.hostname} must be given with ${wanted}://, not ${scheme}://.`);
  }
  let port: number = DEFAULT_PORTS[scheme];
  if (authority.port !== null) {
    if (!/^[1-9][0-9]{0,4}$/.test(authority.port)) return fail(`The port "${authority.port}" in the ${kind.noun} URL is not valid.`);
    port = Number(authority.port);
  }
  const host = sameScheme.find((h) => h.port === port);
  if (!host) {
    const ports = sameScheme.map((h) => h.port).join(" or ");
    return fail(`${capitalize(kind.noun)}s on ${authority.hostname} are served on port ${ports}, not ${port}; remove the port or use the one configured.`);
  }

  if (path.includes("%")) {
    return fail(`The path of the ${kind.noun} URL must not contain percent-encoded characters; owner and repository names never need them.`);
  }
  return parsePath(path, host, kind);
}

function parsePath(path: string, host: HostOrigin, kind: ItemKind): ParseResult<PullRequestRef> {
  const expected = `The path must be /OWNER/REPO/${kind.segment}/NUMBER (as in ${host.origin}/OWNER/REPO/${kind.segment}/NUMBER)`;
  const segments = path.split("/").slice(1);
  // One trailing "/" is how browsers often show the page; more, or empty segments elsewhere, are not.
  if (segments.length > 0 && segments[segments.length - 1] === "") segments.pop();
  if (segments.some((s) => s === "")) return fail(`${expected}; the URL has an empty path segment ("//").`);
  if (segments.some((s) => s === "." || s === "..")) return fail(`${expected}; the URL has a "." or ".." segment.`);
  const [owner = "", repo = "", segment = "", numberText = "", tab, ...extra] = segments;
  if (segments.length < 4) return fail(`${expected}; this URL does not point to ${kind.one}.`);
  if (segment !== kind.segment) {
    const hint = segment === "pulls" ? ' ("pulls" is the list of pull requests; open one and copy its URL)' : "";
    return fail(`${expected}; found "/${segment}/" where "/${kind.segment}/" belongs${hint}.`);
  }
  if (extra.length > 0 || (tab !== undefined && !kind.tabs.has(tab))) {
    return fail(`${expected}; the URL continues after the ${kind.noun} number.`);
  }
  if (!OWNER.test(owner)) {
    return fail(`"${owner}" is not a valid owner name: letters, digits, "-" and "_", at most 39, starting with a letter or digit.`);
  }
  if (!REPO.test(repo)) {
    return fail(`"${repo}" is not a valid repository name: letters, digits, ".", "-" and "_", at most 100.`);
  }
  if (!NUMBER.test(numberText)) {
    return fail(
      `"${numberText}" is not ${kind.one} number: the number must be a positive whole number ` +
        `without leading zeros, at most ${MAX_PULL_NUMBER}.`,
    );
  }
  const number = Number(numberText);
  return {
    ok: true,
    value: {
      host: host.origin.replace(/^https?:\/\//, ""),
      apiBase: host.apiBase,
      owner,
      repo,
      number,
      htmlUrl: `${host.origin}/${owner}/${repo}/${kind.segment}/${number}`,
    },
  };
}
