// The dev identity provider's pages: server-rendered HTML with one stylesheet inline, allowed by
// its hash in the Content-Security-Policy, and nothing loaded from anywhere else.
import { createHash } from "node:crypto";
import { ROLES, type Role } from "../../src/domain/roles.js";

const STYLE = `
:root { font-family: system-ui, sans-serif; color: #1a1a1a; background: #f5f5f4; line-height: 1.5; }
body { margin: 0; }
main { max-width: 34rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border: 1px solid #d6d3d1; border-radius: 8px; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 .5rem; }
p { margin: .25rem 0 .75rem; }
ul { list-style: none; margin: 0; padding: 0; }
li { margin: 0 0 .5rem; }
label { display: block; font-weight: 600; }
input, select { font: inherit; width: 100%; box-sizing: border-box; padding: .4rem .5rem; border: 1px solid #57534e; border-radius: 4px; }
.field { margin: 0 0 1rem; }
.hint { color: #44403c; font-size: .9rem; margin: .25rem 0 0; }
.field-error, .error { color: #b91c1c; font-weight: 600; }
[aria-invalid="true"] { border: 2px solid #b91c1c; }
button { font: inherit; cursor: pointer; padding: .5rem 1rem; border-radius: 4px; border: 1px solid #1e40af; background: #1d4ed8; color: #fff; }
.preset { width: 100%; text-align: left; background: #fff; color: #1a1a1a; border-color: #57534e; }
.preset span { display: block; color: #44403c; font-size: .9rem; }
:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
code { font-size: .9em; }
`;
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");

/**
 * Headers of every answer. Forms may post here and be redirected on to the app (sign-in and
 * sign-out end there). script-src is there only for oidc-provider to add the hash of its one
 * inline script, the form that submits itself to end a session that has gone already.
 */
export function pageHeaders(appOrigins: string[]): Record<string, string> {
  return {
    "content-security-policy": [
      "default-src 'none'",
      `style-src 'sha256-${STYLE_HASH}'`,
      "script-src 'self'",
      `form-action 'self' ${appOrigins.join(" ")}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Assay dev identity provider</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export interface Preset {
  key: string;
  title: string;
  sub: string;
  email: string;
  role: Role;
  org?: string;
}

export type Field = "sub" | "email" | "role" | "org";

export interface SignInForm {
  /** Where both forms post. */
  action: string;
  presets: readonly Preset[];
  /** What was typed, shown again beside what was wrong with it. */
  values?: Partial<Record<Field, string>>;
  errors?: Partial<Record<Field, string>>;
}

const ROLE_LABELS: Record<Role, string> = {
  candidate: "candidate",
  interviewer: "interviewer",
  orgadmin: "organization admin (orgadmin)",
  admin: "platform admin (admin)",
};

function field(name: Field, label: string, control: (attributes: string) => string, hint: string | undefined, error: string | undefined): string {
  const described = [hint ? `${name}-hint` : "", error ? `${name}-error` : ""].filter(Boolean).join(" ");
  const attributes = `id="${name}" name="${name}"${described ? ` aria-describedby="${described}"` : ""}${error ? ' aria-invalid="true"' : ""}`;
  return `<div class="field">
<label for="${name}">${label}</label>
${control(attributes)}
${hint ? `<p class="hint" id="${name}-hint">${hint}</p>` : ""}
${error ? `<p class="field-error" id="${name}-error">${escapeHtml(error)}</p>` : ""}
</div>`;
}

export function signInPage({ action, presets, values = {}, errors = {} }: SignInForm): string {
  const value = (name: Field) => escapeHtml(values[name] ?? "");
  const presetItems = presets
    .map(
      (p) => `<li><button type="submit" class="preset" name="preset" value="${escapeHtml(p.key)}">${escapeHtml(p.title)}
<span>${escapeHtml(p.email)}, ${escapeHtml(ROLE_LABELS[p.role])}${p.org ? ` of ${escapeHtml(p.org)}` : ""}</span></button></li>`,
    )
    .join("\n");
  const roleOptions = ROLES.map(
    (role) => `<option value="${role}"${(values.role ?? "candidate") === role ? " selected" : ""}>${ROLE_LABELS[role]}</option>`,
  ).join("");
  const failed = Object.keys(errors).length > 0;
  return page(
    "Sign in",
    `<h1>Sign in to Assay</h1>
<p>This is the local development identity provider: choose who you are, no password asked. Its access
tokens are signed with the same key as <code>npm run token</code>.</p>
<h2 id="presets-heading">As a sample user</h2>
<form method="post" action="${escapeHtml(action)}" aria-labelledby="presets-heading">
<ul>
${presetItems}
</ul>
</form>
<h2 id="anyone-heading">As anyone</h2>
${failed ? '<p class="error" role="alert">The sign-in did not go through: check the fields marked below.</p>' : ""}
<form method="post" action="${escapeHtml(action)}" aria-labelledby="anyone-heading">
${field("email", "E-mail address", (a) => `<input ${a} type="email" required maxlength="320" autocomplete="email" value="${value("email")}">`, "A candidate invited by e-mail types the invited address.", errors.email)}
${field("role", "Role", (a) => `<select ${a}>${roleOptions}</select>`, undefined, errors.role)}
${field("org", "Organization id (optional)", (a) => `<input ${a} type="text" maxlength="128" autocomplete="off" value="${value("org")}">`, "The organization the role is in, like <code>acme</code>. A candidate needs none.", errors.org)}
${field("sub", "User id (optional)", (a) => `<input ${a} type="text" maxlength="255" autocomplete="off" value="${value("sub")}">`, "The token's <code>sub</code>. Left empty, the e-mail address is the user id.", errors.sub)}
<button type="submit">Sign in</button>
</form>`,
  );
}

/** The confirmation oidc-provider asks for before it ends the session; `form` carries its anti-forgery value. */
export function signOutPage(form: string): string {
  return page(
    "Sign out",
    `<h1>Sign out of Assay?</h1>
<p>This ends your session with the dev identity provider too: the next sign-in asks who you are again.</p>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>`,
  );
}

export function signedOutPage(): string {
  return page("Signed out", "<h1>Signed out</h1>\n<p>You are signed out of the Assay dev identity provider.</p>");
}

export function errorPage(title: string, detail: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(detail)}</p>`);
}
