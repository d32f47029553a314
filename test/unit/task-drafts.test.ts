import { describe, expect, it } from "vitest";
import { parseIssueUrl, parsePullRequestUrl } from "../../src/domain/pr-url";
import { draftStatus, draftStatusFilter, pairRefusal, publishRefusal, revalidateRefusal } from "../../src/domain/task-drafts";

const draft = (status: "IMPORTING" | "PREPARING" | "VALIDATING" | "READY" | "FAILED", publishedAt: string | null = null) => ({
  status,
  publishedAt,
  failureReason: status === "FAILED" ? "No test fails at the base commit." : null,
});

describe("draft states", () => {
  it("names READY VALIDATED and a published draft PUBLISHED, and filters back to rows", () => {
    expect(draftStatus(draft("READY"))).toBe("VALIDATED");
    expect(draftStatus(draft("READY", "2026-01-01T00:00:00Z"))).toBe("PUBLISHED");
    expect(draftStatus(draft("PREPARING"))).toBe("PREPARING");
    expect(draftStatusFilter("VALIDATED")).toEqual({ statuses: ["READY"], published: false });
    expect(draftStatusFilter("PUBLISHED")).toEqual({ published: true });
    expect(draftStatusFilter("FAILED")).toEqual({ statuses: ["FAILED"], published: false });
  });

  it("publishes only a validated, unpublished draft, and says why not otherwise", () => {
    expect(publishRefusal("d", draft("READY"))).toBeNull();
    expect(publishRefusal("d", draft("FAILED"))).toMatch(/failed validation.*No test fails at the base commit\..*validate/);
    expect(publishRefusal("d", draft("VALIDATING"))).toMatch(/still being validated \(VALIDATING\)/);
    expect(publishRefusal("d", draft("READY", "2026-01-01T00:00:00Z"))).toMatch(/already published/);
  });

  it("validates again only after a validation ended, and never once published", () => {
    expect(revalidateRefusal("d", draft("FAILED"))).toBeNull();
    expect(revalidateRefusal("d", draft("READY"))).toBeNull();
    expect(revalidateRefusal("d", draft("IMPORTING"))).toMatch(/being validated now/);
    expect(revalidateRefusal("d", draft("READY", "2026-01-01T00:00:00Z"))).toMatch(/published/);
  });
});

describe("issue URLs and the pair", () => {
  const ghe = ["http://127.0.0.1:8790"];

  it("parses issue URLs with the pull request rules, and refuses a pull request URL in their place", () => {
    const ok = parseIssueUrl("https://github.com/acme/slugify/issues/12", []);
    expect(ok).toEqual({
      ok: true,
      value: { host: "github.com", apiBase: "https://api.github.com", owner: "acme", repo: "slugify", number: 12, htmlUrl: "https://github.com/acme/slugify/issues/12" },
    });
    expect(parseIssueUrl("http://127.0.0.1:8790/acme/slugify/issues/3", ghe)).toMatchObject({ ok: true, value: { apiBase: "http://127.0.0.1:8790/api/v3" } });
    const pull = parseIssueUrl("https://github.com/acme/slugify/pull/12", []);
    expect(pull).toMatchObject({ ok: false, reason: expect.stringMatching(/found "\/pull\/" where "\/issues\/" belongs/) });
    expect(parseIssueUrl("https://github.com/acme/slugify/issues/12/files", [])).toMatchObject({ ok: false, reason: expect.stringMatching(/continues after the issue number/) });
    expect(parseIssueUrl("https://evil.example/acme/slugify/issues/1", [])).toMatchObject({ ok: false, reason: expect.stringMatching(/Only issues on github.com/) });
    expect(parseIssueUrl("", [])).toMatchObject({ ok: false, reason: expect.stringMatching(/^The issue URL is empty/) });
  });

  it("pairs an issue and a pull request only within one repository, with different numbers", () => {
    const issue = (url: string) => (parseIssueUrl(url, []) as { ok: true; value: never }).value;
    const pull = (url: string) => (parsePullRequestUrl(url, []) as { ok: true; value: never }).value;
    expect(pairRefusal(issue("https://github.com/acme/slugify/issues/2"), pull("https://github.com/ACME/Slugify/pull/1"))).toBeNull();
    expect(pairRefusal(issue("https://github.com/acme/other/issues/2"), pull("https://github.com/acme/slugify/pull/1"))).toMatch(/one repository/);
    expect(pairRefusal(issue("https://github.com/acme/slugify/issues/1"), pull("https://github.com/acme/slugify/pull/1"))).toMatch(/same number/);
  });
});
