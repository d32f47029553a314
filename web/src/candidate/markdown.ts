// A small, safe subset of Markdown for the task statement: headings, paragraphs, lists, quotes,
// code blocks and spans, emphasis and http(s) links, parsed into a tree the page renders as
// elements. Never HTML: raw HTML in the text stays text, so a statement cannot carry markup
// or script into the page.

export type Inline =
  | { type: "text"; text: string }
  | { type: "code"; text: string }
  | { type: "strong"; children: Inline[] }
  | { type: "em"; children: Inline[] }
  | { type: "link"; href: string; children: Inline[] }
  | { type: "break" };

export type Block =
  | { type: "heading"; level: number; children: Inline[] }
  | { type: "paragraph"; children: Inline[] }
  | { type: "code"; lang: string; text: string }
  | { type: "list"; ordered: boolean; start: number; items: Inline[][] }
  | { type: "quote"; children: Block[] }
  | { type: "rule" };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const BULLET = /^ {0,3}([-*+])\s+(.*)$/;
const ORDERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const INDENTED = /^(?: {4}|\t)(.*)$/;

export function parseMarkdown(source: string): Block[] {
  return parseLines(source.replace(/\r\n?/g, "\n").split("\n"));
}

function parseLines(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(marker)) body.push(lines[i++]!);
      i++;
      blocks.push({ type: "code", lang: fence[2] ?? "", text: body.join("\n") });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ type: "heading", level: heading[1]!.length, children: parseInline(heading[2] ?? "") });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ type: "rule" });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== "" && QUOTE.test(lines[i]!)) body.push(QUOTE.exec(lines[i++]!)![1]!);
      blocks.push({ type: "quote", children: parseLines(body) });
      continue;
    }
    const listStart = BULLET.exec(line) ?? ORDERED.exec(line);
    if (listStart) {
      const ordered = !BULLET.test(line);
      const items: string[][] = [];
      while (i < lines.length) {
        const current = lines[i]!;
        const item = ordered ? ORDERED.exec(current) : BULLET.exec(current);
        if (item) {
          items.push([item[2]!]);
          i++;
        } else if (current.trim() !== "" && /^\s+/.test(current) && items.length > 0) {
          items[items.length - 1]!.push(current.trim());
          i++;
        } else break;
      }
      blocks.push({ type: "list", ordered, start: ordered ? Number(listStart[1]) : 1, items: items.map((parts) => parseInline(parts.join("\n"))) });
      continue;
    }
    if (INDENTED.test(line)) {
      const body: string[] = [];
      while (i < lines.length && (INDENTED.test(lines[i]!) || lines[i]!.trim() === "")) body.push(INDENTED.exec(lines[i++]!)?.[1] ?? "");
      while (body.length > 0 && body[body.length - 1]!.trim() === "") body.pop();
      blocks.push({ type: "code", lang: "", text: body.join("\n") });
      continue;
    }
    const paragraph: string[] = [];
    while (i < lines.length) {
      const current = lines[i]!;
      if (current.trim() === "" || FENCE.test(current) || HEADING.test(current) || QUOTE.test(current) || BULLET.test(current) || RULE.test(current)) break;
      paragraph.push(current);
      i++;
    }
    blocks.push({ type: "paragraph", children: parseInline(paragraph.join("\n")) });
  }
  return blocks;
}

/** Only web links: anything else (javascript:, data:) is shown as text. */
function safeHref(href: string): string | null {
  try {
    const url = new URL(href);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push({ type: "text", text: plain });
    plain = "";
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const char = text[i]!;
    if (char === "\\" && i + 1 < text.length && /[\\`*_[\]()#>!-]/.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (char === "`") {
      const ticks = /^`+/.exec(rest)![0];
      const end = text.indexOf(ticks, i + ticks.length);
      if (end !== -1) {
        flush();
        out.push({ type: "code", text: text.slice(i + ticks.length, end).replace(/\n/g, " ").trim() || " " });
        i = end + ticks.length;
        continue;
      }
      plain += ticks;
      i += ticks.length;
      continue;
    }
    if (char === "*" || char === "_") {
      const double = rest.startsWith(char.repeat(2));
      const marker = double ? char.repeat(2) : char;
      const end = text.indexOf(marker, i + marker.length);
      const inner = end === -1 ? "" : text.slice(i + marker.length, end);
      const wordInside = char === "_" && /\w/.test(text[i - 1] ?? "");
      if (end !== -1 && inner.trim() === inner && inner !== "" && !wordInside) {
        flush();
        out.push({ type: double ? "strong" : "em", children: parseInline(inner) });
        i = end + marker.length;
        continue;
      }
    }
    if (char === "[") {
      const link = /^\[([^\]\n]+)\]\(([^()\s]+)\)/.exec(rest);
      const href = link ? safeHref(link[2]!) : null;
      if (link && href) {
        flush();
        out.push({ type: "link", href, children: parseInline(link[1]!) });
        i += link[0].length;
        continue;
      }
    }
    if (char === "\n") {
      if (/ {2,}$/.test(plain) || plain.endsWith("\\")) {
        plain = plain.replace(/(?: {2,}|\\)$/, "");
        flush();
        out.push({ type: "break" });
      } else plain += " ";
      i++;
      continue;
    }
    plain += char;
    i++;
  }
  flush();
  return out;
}
