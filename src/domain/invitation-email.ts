/** The invitation e-mail: a plain-text and an HTML part saying the same. */

export interface InvitationEmailFacts {
  taskTitle: string;
  organizationName: string;
  inviterEmail: string;
  /** ISO 8601 UTC. */
  expiresAt: string;
  acceptUrl: string;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
  links: string[];
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** "Sat, 28 Nov 2026 08:50 UTC": unambiguous for every reader, whatever their locale. */
export function formatExpiry(iso: string): string {
  const d = new Date(iso);
  const day = d.toUTCString().slice(0, 16);
  const time = `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
  return `${day} ${time} UTC`;
}

export function renderInvitationEmail(f: InvitationEmailFacts): RenderedEmail {
  const expiry = formatExpiry(f.expiresAt);
  // Titles come from pull requests; a line break in a subject would split the header.
  const subject = `${f.organizationName} invites you to a coding assessment: ${f.taskTitle}`.replace(/\s+/g, " ");
  const text = [
    "Hello,",
    "",
    `${f.inviterEmail} of ${f.organizationName} invites you to take the coding assessment "${f.taskTitle}" on Assay.`,
    "",
    "Accept the invitation here (sign in with this e-mail address):",
    f.acceptUrl,
    "",
    `The link can be used once and expires on ${expiry}. If it has expired, ask ${f.organizationName} to send a new one.`,
    "",
    "If you did not expect this e-mail, you can ignore it.",
    "",
  ].join("\n");
  const e = {
    org: escapeHtml(f.organizationName),
    task: escapeHtml(f.taskTitle),
    inviter: escapeHtml(f.inviterEmail),
    url: escapeHtml(f.acceptUrl),
    expiry: escapeHtml(expiry),
  };
  const html = [
    "<!doctype html>",
    '<html><body style="font-family: sans-serif; line-height: 1.5">',
    "<p>Hello,</p>",
    `<p>${e.inviter} of <strong>${e.org}</strong> invites you to take the coding assessment <strong>${e.task}</strong> on Assay.</p>`,
    `<p><a href="${e.url}">Accept the invitation</a> (sign in with this e-mail address).</p>`,
    `<p>The link can be used once and expires on ${e.expiry}. If it has expired, ask ${e.org} to send a new one.</p>`,
    `<p style="color: #666">If the link does not open, copy this address into your browser: ${e.url}<br>If you did not expect this e-mail, you can ignore it.</p>`,
    "</body></html>",
    "",
  ].join("\n");
  return { subject, text, html, links: [f.acceptUrl] };
}
