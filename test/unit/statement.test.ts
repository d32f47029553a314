import { describe, expect, it } from "vitest";
import { defaultStatement, FALLBACK_TITLE, STATEMENT_LIMITS, taskStatement } from "../../src/domain/statement";

const pr = (title: string, body = "") => ({ title, body, owner: "acme", repo: "slugify" });
const body = (text: string) => defaultStatement(pr("t", text)).body;

describe("the default statement from a pull request", () => {
  it("keeps a plain title and body as they are", () => {
    const text = "Long titles make unwieldy URLs. `maxLength` limits the slug to whole words that fit.\n\n- keeps words\n- [ ] docs";
    expect(defaultStatement(pr("Add a maxLength option to slugify", text))).toEqual({ title: "Add a maxLength option to slugify", body: text });
  });

  it("takes issue and pull request references out of the title, and the punctuation they leave", () => {
    expect(defaultStatement(pr("Fix #12: slugify cuts words (#34)")).title).toBe("Fix: slugify cuts words");
    expect(defaultStatement(pr("#12 Handle emoji")).title).toBe("Handle emoji");
    expect(defaultStatement(pr("Port acme/slugify to ESM, see acme/slugify#9")).title).toBe("Port the repository to ESM, see");
  });

  it("falls back to a generic title when nothing is left", () => {
    expect(defaultStatement(pr("#123")).title).toBe(FALLBACK_TITLE);
    expect(defaultStatement(pr("   ")).title).toBe(FALLBACK_TITLE);
  });

  it("keeps the text of links and drops their targets, images and bare URLs", () => {
    expect(body("See [the issue](https://github.com/acme/slugify/issues/12) for details.")).toBe("See the issue for details.");
    expect(body("Before: ![screenshot](https://user-images.example.com/1.png) after")).toBe("Before: after");
    expect(body("Docs at https://example.com/docs/slug. And <https://github.com/acme/slugify/pull/7>!")).toBe("Docs at. And!");
    expect(body('Read <a href="https://github.com/acme/slugify">the code</a> or www.acme.dev/x')).toBe("Read the code or");
    expect(body("Mirror: github.com/acme/slugify/pull/7 today")).toBe("Mirror: today");
    expect(body("Read [the spec][spec].\n\n[spec]: https://example.com/spec")).toBe("Read the spec.");
  });

  it("drops commit ids of 7 to 40 hex digits, but not numbers or words", () => {
    expect(body(`Reverts ${"a1b2c3d".padEnd(40, "9")} and abc1234, after 1234567 defaced cafe`)).toBe("Reverts and, after 1234567 defaced cafe");
    expect(body("Short sha abc123 stays")).toBe("Short sha abc123 stays");
    expect(body("acme/slugify@deadbee1 broke it")).toBe("broke it");
  });

  it("drops issue and pull request references, and the lines that close them", () => {
    const text = ["Cuts long slugs.", "", "Fixes #12", "- Closes acme/slugify#3", "Resolves https://github.com/acme/slugify/issues/4", "Related to #5 and GH-6."].join("\n");
    expect(body(text)).toBe("Cuts long slugs.\n\nRelated to and.");
    expect(body("Fixes the bug where #12 broke")).toBe("Fixes the bug where broke");
    expect(body("Escaped &#123; stays; so does ## Heading and C#")).toBe("Escaped &#123; stays; so does ## Heading and C#");
  });

  it("names the repository generically where it spells owner/name", () => {
    expect(body("Bring acme/slugify up to date; ACME/Slugify too.")).toBe("Bring the repository up to date; the repository too.");
    expect(body("slugify and acme stay: they name the thing being changed")).toBe("slugify and acme stay: they name the thing being changed");
  });

  it("drops HTML comments, @mentions and trailers, but not e-mail addresses", () => {
    const text = "<!-- PR template: describe your change -->\nThanks @octocat and @acme/reviewers!\ncc: @jane-doe\nWrite to a@b.example\n\nCo-authored-by: Jane <jane@x.example>\n<!-- unclosed";
    expect(body(text)).toBe("Thanks and!\ncc:\nWrite to a@b.example");
  });

  it("keeps code as written, except links, commit ids and the repository's name", () => {
    const text = [
      "Use `@decorator` and `#12` in code:",
      "```python",
      "@property",
      "def slug(self):  # see #12",
      '    return fetch("https://github.com/acme/slugify")  # acme/slugify abc1234f',
      "```",
      "Then @someone reviews.",
    ].join("\n");
    expect(body(text)).toBe(
      ["Use `@decorator` and `#12` in code:", "```python", "@property", "def slug(self):  # see #12", '    return fetch("")  # the repository', "```", "Then reviews."].join("\n"),
    );
  });

  it("drops list items that were only a link, and collapses the blank lines left", () => {
    expect(body("Steps:\n- https://example.com/a\n- keep me\n1. [](https://x.example/y)\n\n\n\nEnd")).toBe("Steps:\n- keep me\n\nEnd");
  });

  it("keeps markdown indentation and line breaks", () => {
    expect(body("- a\n  - nested\n\n    indented code")).toBe("- a\n  - nested\n\n    indented code");
  });

  it("bounds the title and body", () => {
    const long = defaultStatement(pr("x".repeat(400), "y".repeat(30_000)));
    expect(long.title).toHaveLength(STATEMENT_LIMITS.titleChars);
    expect(long.body).toHaveLength(STATEMENT_LIMITS.bodyChars);
  });
});

describe("a task's statement", () => {
  const task = {
    statementTitle: null,
    statementBody: null,
    prTitle: "Fix #1: cut",
    prBody: "See #1",
    issueTitle: null,
    issueBody: null,
    sourceOwner: "acme",
    sourceRepo: "slugify",
  };

  it("is the default until staff write one; each part replaces the default on its own", () => {
    expect(taskStatement(task)).toEqual({ title: "Fix: cut", body: "See" });
    expect(taskStatement({ ...task, statementTitle: "Cut slugs" })).toEqual({ title: "Cut slugs", body: "See" });
    expect(taskStatement({ ...task, statementTitle: "T", statementBody: "" })).toEqual({ title: "T", body: "" });
  });

  it("is null until the import has read the pull request, unless staff wrote all of it", () => {
    expect(taskStatement({ ...task, prTitle: null, prBody: null })).toBeNull();
    expect(taskStatement({ ...task, prTitle: null, prBody: null, statementTitle: "T" })).toBeNull();
    expect(taskStatement({ ...task, prTitle: null, prBody: null, statementTitle: "T", statementBody: "B" })).toEqual({ title: "T", body: "B" });
  });
  it("of a draft comes from its issue, never the pull request, with the same references stripped", () => {
    const draft = { ...task, prTitle: "Add maxLength (fixes #2)", prBody: "Implements joinWithin", issueTitle: "Slugs are too long #1" };
    const statement = taskStatement({ ...draft, issueBody: "Cut them. Seen after 3f2a9c1d7e5b4a6c8d0e2f4a6b8c0d2e4f6a8b0c in https://github.com/acme/slugify/issues/9." });
    expect(statement?.title).toBe("Slugs are too long");
    expect(statement?.body).toMatch(/^Cut them\./);
    expect(JSON.stringify(statement)).not.toMatch(/3f2a9c1|github\.com|joinWithin|maxLength/);
    expect(taskStatement({ ...draft, issueBody: null })).toEqual({ title: "Slugs are too long", body: "" });
    expect(taskStatement({ ...draft, statementBody: "Staff text" })?.body).toBe("Staff text");
  });
});
