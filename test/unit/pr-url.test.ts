import { describe, expect, it } from "vitest";
import { parseEnterpriseHost, parsePullRequestUrl } from "../../src/domain/pr-url";

const GHE = ["https://ghe.example.com", "http://127.0.0.1:8790"];

function accepted(url: string, hosts = GHE) {
  const result = parsePullRequestUrl(url, hosts);
  if (!result.ok) throw new Error(`expected ${url} to be accepted, got: ${result.reason}`);
  return result.value;
}

function reason(url: string, hosts = GHE): string {
  const result = parsePullRequestUrl(url, hosts);
  if (result.ok) throw new Error(`expected ${JSON.stringify(url)} to be refused, got ${JSON.stringify(result.value)}`);
  return result.reason;
}

describe("accepted pull request URLs", () => {
  it("github.com uses the public API", () => {
    expect(accepted("https://github.com/octo-org/hello.world/pull/42")).toEqual({
      host: "github.com",
      apiBase: "https://api.github.com",
      owner: "octo-org",
      repo: "hello.world",
      number: 42,
      htmlUrl: "https://github.com/octo-org/hello.world/pull/42",
    });
  });

  it("a configured enterprise host uses <origin>/api/v3", () => {
    expect(accepted("https://ghe.example.com/team/app/pull/7")).toMatchObject({
      host: "ghe.example.com",
      apiBase: "https://ghe.example.com/api/v3",
      htmlUrl: "https://ghe.example.com/team/app/pull/7",
    });
  });

  it("the local dev repo host over http on its configured port", () => {
    expect(accepted("http://127.0.0.1:8790/assay-demo/slugify-js/pull/1")).toEqual({
      host: "127.0.0.1:8790",
      apiBase: "http://127.0.0.1:8790/api/v3",
      owner: "assay-demo",
      repo: "slugify-js",
      number: 1,
      htmlUrl: "http://127.0.0.1:8790/assay-demo/slugify-js/pull/1",
    });
  });

  it.each([
    ["trailing slash", "https://github.com/o/r/pull/1/"],
    ["files tab", "https://github.com/o/r/pull/1/files"],
    ["commits tab with slash", "https://github.com/o/r/pull/1/commits/"],
    ["checks tab", "https://github.com/o/r/pull/1/checks"],
    ["fragment of a comment", "https://github.com/o/r/pull/1#issuecomment-123"],
    ["query of the diff view", "https://github.com/o/r/pull/1/files?diff=split&w=1"],
    ["upper-case host and scheme", "HTTPS://GitHub.COM/o/r/pull/1"],
    ["explicit default port", "https://github.com:443/o/r/pull/1"],
    ["surrounding whitespace from copy and paste", "  https://github.com/o/r/pull/1\n"],
  ])("%s", (_, url) => {
    expect(accepted(url)).toMatchObject({ apiBase: "https://api.github.com", owner: "o", repo: "r", number: 1 });
    expect(accepted(url).htmlUrl).toBe("https://github.com/o/r/pull/1");
  });

  it("names with the characters GitHub allows", () => {
    expect(accepted("https://github.com/A-b_9/.dotfiles_-x/pull/999999999")).toMatchObject({
      owner: "A-b_9",
      repo: ".dotfiles_-x",
      number: 999_999_999,
    });
  });

  it("an IPv6 enterprise host configured exactly", () => {
    expect(accepted("http://[::1]:8790/o/r/pull/3", ["http://[::1]:8790"])).toMatchObject({
      host: "[::1]:8790",
      apiBase: "http://[::1]:8790/api/v3",
    });
  });

  it("an enterprise entry with a trailing slash and upper case is the same origin", () => {
    expect(accepted("https://ghe.example.com/o/r/pull/1", ["HTTPS://GHE.Example.com/"]).apiBase).toBe("https://ghe.example.com/api/v3");
  });
});

describe("refused: hosts", () => {
  it.each([
    ["cloud metadata address", "http://169.254.169.254/latest/meta-data/pull/1", /IP address \(169\.254\.169\.254\)/],
    ["metadata address over https", "https://169.254.169.254/o/r/pull/1", /IP address/],
    ["loopback not configured", "http://127.0.0.1/o/r/pull/1", /port 8790, not 80/],
    ["loopback on another port", "http://127.0.0.1:8791/o/r/pull/1", /port 8790, not 8791/],
    ["loopback in short form", "http://127.1:8790/o/r/pull/1", /IP address/],
    ["loopback as a number", "http://2130706433:8790/o/r/pull/1", /IP address/],
    ["loopback in hex", "http://0x7f000001:8790/o/r/pull/1", /IP address/],
    ["IPv6 loopback", "http://[::1]:8790/o/r/pull/1", /IP address/],
    ["suffix trick", "https://github.com.evil.example/o/r/pull/1", /"github\.com\.evil\.example" is not one of these hosts/],
    ["prefix trick", "https://evilgithub.com/o/r/pull/1", /not one of these hosts/],
    ["subdomain", "https://api.github.com/repos/o/r/pulls/1", /not one of these hosts/],
    ["gist subdomain", "https://gist.github.com/o/r/pull/1", /not one of these hosts/],
    ["trailing dot", "https://github.com./o/r/pull/1", /not one of these hosts/],
    ["enterprise suffix trick", "https://ghe.example.com.evil.example/o/r/pull/1", /not one of these hosts/],
    ["other host", "https://gitlab.com/o/r/-/merge_requests/1", /Only pull requests on github\.com, ghe\.example\.com, http:\/\/127\.0\.0\.1:8790/],
    ["odd port on github.com", "https://github.com:8443/o/r/pull/1", /port 443, not 8443/],
    ["port zero", "https://github.com:0/o/r/pull/1", /port "0"/],
    ["port with leading zero", "https://github.com:0443/o/r/pull/1", /port "0443"/],
    ["empty port", "https://github.com:/o/r/pull/1", /port ""/],
    ["non-numeric port", "https://github.com:https/o/r/pull/1", /port "https"/],
    ["no host", "https:///o/r/pull/1", /no valid host/],
    ["percent-encoded host", "https://git%68ub.com/o/r/pull/1", /percent-encoded/],
    ["http for github.com", "http://github.com/o/r/pull/1", /must be given with https:\/\//],
    ["https for an http-only dev host", "https://127.0.0.1:8790/o/r/pull/1", /must be given with http:\/\//],
    ["fragment hiding the real host", "https://evil.example#@github.com/o/r/pull/1", /"evil\.example" is not one/],
    ["query hiding the real host", "https://evil.example?@github.com/o/r/pull/1", /"evil\.example" is not one/],
    ["host in the query", "https://github.com?@evil.example/o/r/pull/1", /does not point to a pull request/],
  ])("%s", (_, url, expected) => {
    expect(reason(url)).toMatch(expected);
  });

  it.each([
    ["user and password", "https://user:pass@github.com/o/r/pull/1"],
    ["user only", "https://git@github.com/o/r/pull/1"],
    ["host as user name", "https://github.com@evil.example/o/r/pull/1"],
    ["host and port as user info", "https://github.com:443@169.254.169.254/o/r/pull/1"],
    ["encoded @ after the user", "https://github.com%40evil.example@evil.example/o/r/pull/1"],
  ])("user info: %s", (_, url) => {
    expect(reason(url)).toMatch(/must not contain a user name or password/);
  });

  it("names the allowed hosts when none are configured", () => {
    expect(reason("https://ghe.example.com/o/r/pull/1", [])).toBe(
      'Only pull requests on github.com can be imported; "ghe.example.com" is not one of these hosts.',
    );
  });
});

describe("refused: schemes and characters", () => {
  it.each([
    ["file", "file:///etc/passwd", /must start with https:\/\/ \(not file:\)/],
    ["file with host", "file://github.com/o/r/pull/1", /not file:/],
    ["javascript", "javascript:alert(1)", /not javascript:/],
    ["data", "data:text/plain,https://github.com/o/r/pull/1", /not data:/],
    ["ftp", "ftp://github.com/o/r/pull/1", /not ftp:/],
    ["ssh clone address", "git@github.com:o/r.git", /full https:\/\/ address/],
    ["no scheme", "github.com/o/r/pull/1", /full https:\/\/ address/],
    ["scheme-relative", "//github.com/o/r/pull/1", /full https:\/\/ address/],
    ["single slash", "https:/github.com/o/r/pull/1", /followed by the host/],
    ["no slashes", "https:github.com/o/r/pull/1", /followed by the host/],
    ["empty", "", /empty/],
    ["only whitespace", " \t\n", /empty/],
  ])("%s", (_, url, expected) => {
    expect(reason(url)).toMatch(expected);
  });

  it.each([
    ["backslash after the host", "https://github.com\\@evil.example/o/r/pull/1"],
    ["backslashes as separators", "https:\\\\github.com\\o\\r\\pull\\1"],
    ["backslash in the path", "https://github.com/o/r\\..\\x/pull/1"],
  ])("%s", (_, url) => {
    expect(reason(url)).toMatch(/backslash/);
  });

  it.each([
    ["tab inside the host", "https://git\thub.com/o/r/pull/1"],
    ["newline inside the host", "https://git\nhub.com/o/r/pull/1"],
    ["space in the path", "https://github.com/o/r /pull/1"],
    ["NUL byte", "https://github.com\u0000.evil.example/o/r/pull/1"],
    ["carriage return", "https://github.com/o/r/pull/1\r\nHost: evil"],
    ["no-break space", "https://github.com/o/r/pull/1\u00a0"],
    ["zero-width space", "https://git\u200bhub.com/o/r/pull/1"],
    ["Cyrillic o in the host", "https://github.c\u043em/o/r/pull/1"],
    ["Latin small script g", "https://\u0261ithub.com/o/r/pull/1"],
    ["full-width letters, which URL parsers map to ASCII", "https://\uff47\uff49\uff54\uff48\uff55\uff42.com/o/r/pull/1"],
    ["full-width solidus", "https://github.com\uff0fo/r/pull/1"],
    ["full stop lookalike", "https://github\u3002com/o/r/pull/1"],
    ["non-ASCII owner", "https://github.com/\u00f6/r/pull/1"],
    ["right-to-left override", "https://github.com/o/r/pull/1\u202e"],
    ["punycode is just another host", "https://xn--github-9za.com/o/r/pull/1"],
  ])("%s", (_, url) => {
    const why = reason(url);
    if (url.startsWith("https://xn--")) expect(why).toMatch(/not one of these hosts/);
    else expect(why).toMatch(/spaces, control characters or characters outside plain ASCII/);
  });

  it("an over-long URL", () => {
    expect(reason(`https://github.com/o/r/pull/1?${"a".repeat(3000)}`)).toMatch(/longer than 2048/);
  });
});

describe("refused: paths", () => {
  it.each([
    ["repository page", "https://github.com/o/r", /does not point to a pull request/],
    ["host only", "https://github.com", /does not point to a pull request/],
    ["issue", "https://github.com/o/r/issues/1", /found "\/issues\/"/],
    ["pull list", "https://github.com/o/r/pulls/1", /"pulls" is the list/],
    ["pull list without number", "https://github.com/o/r/pulls", /does not point to a pull request/],
    ["no number", "https://github.com/o/r/pull/", /does not point to a pull request/],
    ["commit in a PR", "https://github.com/o/r/pull/1/commits/abc123", /continues after the pull request number/],
    ["unknown tab", "https://github.com/o/r/pull/1/evil", /continues after/],
    ["diff suffix", "https://github.com/o/r/pull/1.diff", /not a pull request number/],
    ["two trailing slashes", "https://github.com/o/r/pull/1//", /empty path segment/],
    ["double slash", "https://github.com//o/r/pull/1", /empty path segment/],
    ["dot-dot segment", "https://github.com/o/r/../x/pull/1", /"\." or "\.\." segment/],
    ["dot-dot repository", "https://github.com/o/../pull/1", /"\." or "\.\." segment/],
    ["dot repository", "https://github.com/o/./r/pull/1", /"\." or "\.\." segment/],
    ["percent-encoded slash", "https://github.com/o%2Fr/x/pull/1", /percent-encoded/],
    ["percent-encoded dot-dot", "https://github.com/o/%2e%2e/pull/1", /percent-encoded/],
    ["percent-encoded letter", "https://github.com/o/r/pu%6cl/1", /percent-encoded/],
    ["percent-encoded number", "https://github.com/o/r/pull/%31", /percent-encoded/],
    ["owner starting with a hyphen", "https://github.com/-o/r/pull/1", /"-o" is not a valid owner name/],
    ["owner too long", `https://github.com/${"a".repeat(40)}/r/pull/1`, /not a valid owner name/],
    ["owner with a dot", "https://github.com/o.x/r/pull/1", /not a valid owner name/],
    ["repository with punctuation", "https://github.com/o/r;rm/pull/1", /not a valid repository name/],
    ["repository too long", `https://github.com/o/${"r".repeat(101)}/pull/1`, /not a valid repository name/],
    ["repository with a colon", "https://github.com/o/r:x/pull/1", /not a valid repository name/],
  ])("%s", (_, url, expected) => {
    expect(reason(url)).toMatch(expected);
  });

  it.each([
    ["word", "abc"],
    ["zero", "0"],
    ["leading zero", "01"],
    ["negative", "-1"],
    ["plus sign", "+1"],
    ["decimal", "1.5"],
    ["exponent", "1e3"],
    ["hex", "0x10"],
    ["ten digits", "1000000000"],
    ["huge", "99999999999999999999999"],
    ["with letters", "12abc"],
  ])("pull request number: %s", (_, number) => {
    expect(reason(`https://github.com/o/r/pull/${number}`)).toMatch(
      new RegExp(`"${number.replace(/[.+]/g, "\\$&")}" is not a pull request number: .*at most 999999999`),
    );
  });
});

describe("enterprise host configuration", () => {
  it("reads origins", () => {
    expect(parseEnterpriseHost("https://ghe.example.com")).toEqual({
      scheme: "https",
      hostname: "ghe.example.com",
      port: 443,
      origin: "https://ghe.example.com",
      apiBase: "https://ghe.example.com/api/v3",
    });
    expect(parseEnterpriseHost("https://ghe.example.com:443/").origin).toBe("https://ghe.example.com");
    expect(parseEnterpriseHost("http://127.0.0.1:8790").apiBase).toBe("http://127.0.0.1:8790/api/v3");
  });

  it.each([
    "ghe.example.com",
    "https://ghe.example.com/sub",
    "https://user@ghe.example.com",
    "ftp://ghe.example.com",
    "https://ghe.example.com:99999",
    "https://ghe.example.com:0",
    "https://ghe_bad.example.com",
    "https://github.com",
    "",
  ])("refuses the malformed entry %j", (entry) => {
    expect(() => parseEnterpriseHost(entry)).toThrow(/invalid GitHub Enterprise host/);
    expect(() => parsePullRequestUrl("https://github.com/o/r/pull/1", [entry])).toThrow(/invalid GitHub Enterprise host/);
  });
});
