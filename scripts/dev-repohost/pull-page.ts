import type { PullRequest, PullRequestFile } from "./pull-requests.js";
import type { LocalRepo } from "./repositories.js";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The browser view of a pull request, so a PR URL pasted from Assay opens somewhere useful. */
export function renderPullPage(repo: LocalRepo, pull: PullRequest, files: PullRequestFile[], apiUrl: string): string {
  const rows = files
    .map((file) => {
      const name = file.previousPath ? `${file.previousPath} → ${file.path}` : file.path;
      const counts = file.additions === null ? "binary" : `+${file.additions} −${file.deletions ?? 0}`;
      return `<tr><td>${escapeHtml(file.status)}</td><td><code>${escapeHtml(name)}</code></td><td>${counts}</td></tr>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(pull.title)} · ${escapeHtml(repo.fullName)}#${pull.number}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;background:#f6f8fa;padding:1rem}td{padding:.2rem .6rem}</style>
</head>
<body>
<p>${escapeHtml(repo.fullName)} · pull request #${pull.number} · dev repo host</p>
<h1>${escapeHtml(pull.title)}</h1>
<pre>${escapeHtml(pull.body ?? "No description.")}</pre>
<p>base <code>${pull.baseSha}</code> ← head <code>${pull.headSha}</code> · ${pull.commits} commit(s)</p>
<p><a href="${pull.number}.diff">diff</a> · <a href="${escapeHtml(apiUrl)}">API</a></p>
<table><thead><tr><th>status</th><th>file</th><th>lines</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body>
</html>
`;
}
