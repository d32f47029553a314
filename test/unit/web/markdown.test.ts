import { describe, expect, it } from "vitest";
import { parseInline, parseMarkdown } from "../../../web/src/candidate/markdown";

describe("parseMarkdown (the task statement's safe Markdown subset)", () => {
  it("reads headings, paragraphs joined from lines, lists, rules and quotes", () => {
    expect(parseMarkdown("# Add quoted fields\n\nThe parser\nsplits lines.\n\n- one\n- two\n  continued\n\n2. b\n3. c\n\n---\n> note")).toEqual([
      { type: "heading", level: 1, children: [{ type: "text", text: "Add quoted fields" }] },
      { type: "paragraph", children: [{ type: "text", text: "The parser splits lines." }] },
      {
        type: "list",
        ordered: false,
        start: 1,
        items: [[{ type: "text", text: "one" }], [{ type: "text", text: "two continued" }]],
      },
      { type: "list", ordered: true, start: 2, items: [[{ type: "text", text: "b" }], [{ type: "text", text: "c" }]] },
      { type: "rule" },
      { type: "quote", children: [{ type: "paragraph", children: [{ type: "text", text: "note" }] }] },
    ]);
  });

  it("keeps code blocks (fenced and indented) verbatim, Markdown and HTML inside included", () => {
    expect(parseMarkdown("```js\nconst a = '<b>**x**</b>';\n\n```\n\n    indented\n      more")).toEqual([
      { type: "code", lang: "js", text: "const a = '<b>**x**</b>';\n" },
      { type: "code", lang: "", text: "indented\n  more" },
    ]);
  });

  it("an unclosed fence runs to the end", () => {
    expect(parseMarkdown("```\nline")).toEqual([{ type: "code", lang: "", text: "line" }]);
  });
});

describe("parseInline", () => {
  it("reads code spans, strong, emphasis and escapes; snake_case stays text", () => {
    expect(parseInline("Use `parse()` **now**, *really*; keep max_line_length \\*as is\\*")).toEqual([
      { type: "text", text: "Use " },
      { type: "code", text: "parse()" },
      { type: "text", text: " " },
      { type: "strong", children: [{ type: "text", text: "now" }] },
      { type: "text", text: ", " },
      { type: "em", children: [{ type: "text", text: "really" }] },
      { type: "text", text: "; keep max_line_length *as is*" },
    ]);
  });

  it("links only to http(s); other schemes and raw HTML stay text", () => {
    expect(parseInline("[RFC](https://www.rfc-editor.org/rfc/rfc4180) [x](javascript:alert(1)) <script>")).toEqual([
      { type: "link", href: "https://www.rfc-editor.org/rfc/rfc4180", children: [{ type: "text", text: "RFC" }] },
      { type: "text", text: " [x](javascript:alert(1)) <script>" },
    ]);
  });

  it("two trailing spaces make a line break", () => {
    expect(parseInline("a  \nb")).toEqual([{ type: "text", text: "a" }, { type: "break" }, { type: "text", text: "b" }]);
  });
});
