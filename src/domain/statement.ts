/**
 * The task statement: what candidates read instead of the pull request, which would lead them
 * to the upstream change and its solution (docs/tasks-from-prs.md, "Task statement"). The
 * default is the pull request's title and body without what points back upstream; staff may
 * rewrite either part, and their text replaces the default.
 */

export const STATEMENT_LIMITS = { titleChars: 300, bodyChars: 20_000 } as const;

/** Stands in for a title that has nothing left once the references are taken out. */
export const FALLBACK_TITLE = "Coding task";

export interface TaskStatement {
  title: string;
  /** Markdown. */
  body: string;
}

export interface PullRequestText {
  title: string;
  body: string;
  owner: string;
  repo: string;
}

/** Where a task's statement comes from: staff's text where they wrote one, else the issue's or the pull request's. */
export interface StatementColumns {
  statementTitle: string | null;
  statementBody: string | null;
  /** The pull request as imported; null until the import has read it. */
  prTitle: string | null;
  prBody: string | null;
  /** The issue a draft was made from; when there is one, its text is the default instead of the pull request's. */
  issueTitle: string | null;
  issueBody: string | null;
  sourceOwner: string;
  sourceRepo: string;
}

/**
 * The statement candidates see; null while the task has neither staff's text nor its issue
 * or pull request yet. A draft's statement comes from its issue: the pull request holds the
 * solution's own words, the issue only the problem.
 */
export function taskStatement(t: StatementColumns): TaskStatement | null {
  const source = t.issueTitle !== null ? { title: t.issueTitle, body: t.issueBody } : t.prTitle !== null ? { title: t.prTitle, body: t.prBody } : null;
  const generated = source && defaultStatement({ title: source.title, body: source.body ?? "", owner: t.sourceOwner, repo: t.sourceRepo });
  const title = t.statementTitle ?? generated?.title;
  const body = t.statementBody ?? generated?.body;
  return title === undefined || body === undefined ? null : { title, body };
}

/** The default statement: the pull request's title and body with the rules above applied. */
export function defaultStatement(pr: PullRequestText): TaskStatement {
  const slug = repoSlugPattern(pr.owner, pr.repo);
  const title = tidyLine(cleanProse(pr.title.replace(/\s+/g, " "), slug)).replace(/^[\s:;,.-]+|[\s:;,-]+$/g, "");
  return {
    title: (title || FALLBACK_TITLE).slice(0, STATEMENT_LIMITS.titleChars),
    body: cleanBody(pr.body, slug).slice(0, STATEMENT_LIMITS.bodyChars),
  };
}

const CLOSING_LINE = /^\s*(?:[-*+]\s+)?(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b\s*:?\s*(?:[\w.-]+\/[\w.-]+)?(?:#\d+|https?:\/\/)/i;
const TRAILER_LINE = /^\s*(?:co-authored-by|signed-off-by|reviewed-by|acked-by)\s*:/i;
const LINK_DEFINITION = /^\s{0,3}\[[^\]]+\]:\s*\S/;
const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

function cleanBody(body: string, slug: RegExp): string {
  const text = body.replace(/\r\n?/g, "\n").replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const marker = FENCE.exec(line)?.[1];
    if (fence !== null) {
      out.push(codeLine(line, slug));
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      continue;
    }
    if (marker) {
      fence = marker;
      out.push(codeLine(line, slug));
      continue;
    }
    if (CLOSING_LINE.test(line) || TRAILER_LINE.test(line) || LINK_DEFINITION.test(line)) continue;
    const cleaned = tidyLine(
      line
        .split(/(`[^`\n]+`)/)
        .map((part, i) => (i % 2 === 1 ? stripEverywhere(part, slug) : cleanProse(part, slug)))
        .join(""),
    );
    // A list item whose only content was a link or a reference says nothing any more.
    if (/^\s*(?:[-*+]|\d+[.)])\s*$/.test(cleaned) && line.trim() !== "") continue;
    out.push(cleaned);
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Code is kept as written, but its links, commit ids and the repository's name are not. */
function codeLine(line: string, slug: RegExp): string {
  const stripped = stripEverywhere(line, slug);
  return stripped === line ? line : stripped.replace(/[ \t]+$/, "");
}

/** URLs, commit ids and the repository's owner/name: removed in code and prose alike. */
function stripEverywhere(text: string, slug: RegExp): string {
  return text
    .replace(/\b(?:https?|ftp):\/\/[^\s<>()[\]`'"]*[^\s<>()[\]`'".,;:!?]/gi, "")
    .replace(/\bwww\.[^\s<>()[\]`'"]*[^\s<>()[\]`'".,;:!?]/gi, "")
    .replace(/\b(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|co|edu|gov)\/[^\s<>()[\]`'"]*[^\s<>()[\]`'".,;:!?]/gi, "")
    .replace(/\b[\w.-]+\/[\w.-]+[#@](?:\d+\b|[0-9a-f]{7,40}\b)/gi, "")
    .replace(slug, "$1the repository")
    // 7–40 hex digits with both a digit and a letter: a commit id, not a number or a word like "defaced".
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/gi, "");
}

function cleanProse(text: string, slug: RegExp): string {
  const unlinked = text
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, "$1")
    .replace(/<img\b[^>]*>/gi, "")
    .replace(/<\/?a\b[^>]*>/gi, "")
    .replace(/<(?:https?|ftp|mailto):[^>\s]*>/gi, "");
  return stripEverywhere(unlinked, slug)
    .replace(/(^|[^\w&/#])#\d+\b/g, "$1")
    .replace(/\bGH-\d+\b/g, "")
    .replace(/(^|[^\w@./`-])@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[\w.-]+)?(?![\w@-])/g, "$1");
}

/** Spacing and punctuation left behind by what was taken out; indentation is kept (it is markdown). */
function tidyLine(line: string): string {
  return line
    .replace(/\(\s*\)/g, "")
    .replace(/(\S)[ \t]{2,}(?=\S)/g, "$1 ")
    .replace(/(\S)[ \t]+([,.;:!?)])/g, "$1$2")
    .replace(/\(\s+/g, "(")
    .replace(/[ \t]+$/, "");
}

function repoSlugPattern(owner: string, repo: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\w./-])${escape(owner)}/${escape(repo)}(?![\\w/-]|\\.\\w)`, "gi");
}
