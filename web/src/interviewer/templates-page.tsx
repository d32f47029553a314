// The public templates (docs/api.md, "Public templates"): ready tasks shipped with the service.
// "Use this template" copies one into the organization (POST /public/tasks); the copy is
// validated like an import, so the button goes to the new task's page, which watches it.
import { useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { plural } from "./format";
import { NoOrganization, Pager, useOrganization } from "./parts";

type Template = components["schemas"]["Template"];

export function TemplatesPage(_props: PageProps) {
  const org = useOrganization();
  const [page, setPage] = useState(1);
  const [language, setLanguage] = useState("");
  const templates = useLoad(
    () => call(api.GET("/api/v1/public/templates", { params: { query: { page, limit: 20, ...(language ? { language } : {}) } } })),
    [page, language],
  );

  return (
    <>
      <h1>Templates</h1>
      <p class="muted">Ready tasks shipped with Assay: a small repository, a change to make, and hidden tests. A copy becomes a task of your organization.</p>
      {!org && <NoOrganization />}
      <div class="row filters">
        <div>
          <label for="templates-language">Language</label>
          <select
            id="templates-language"
            value={language}
            onChange={(e) => {
              setLanguage(e.currentTarget.value);
              setPage(1);
            }}
          >
            <option value="">Any</option>
            <option value="javascript">JavaScript</option>
            <option value="python">Python</option>
          </select>
        </div>
      </div>
      {templates.error ? (
        <ErrorBox message={templates.error} onRetry={templates.reload} />
      ) : !templates.data ? (
        <Loading what="Loading templates" />
      ) : templates.data.items.length === 0 ? (
        <Empty>No templates match.</Empty>
      ) : (
        <>
          <ul class="cards">
            {templates.data.items.map((t) => (
              <li key={t.template_id}>
                <TemplateCard template={t} org={org} />
              </li>
            ))}
          </ul>
          <Pager pagination={templates.data.pagination} onPage={setPage} label="Templates" />
        </>
      )}
    </>
  );
}

function TemplateCard({ template, org }: { template: Template; org: string | undefined }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const headingId = `template-${template.template_id}`;

  const use = async () => {
    if (!org) return;
    setBusy(true);
    setError(undefined);
    try {
      const task = await call(api.POST("/api/v1/public/tasks", { body: { template_id: template.template_id, organization_id: org } }));
      navigate(`/console/tasks/${encodeURIComponent(task.task_id)}`);
    } catch (e) {
      setError(describe(e));
      setBusy(false);
    }
  };

  return (
    <article class="box" aria-labelledby={headingId}>
      <h2 id={headingId}>{template.title}</h2>
      <p>
        {template.language}, {template.test_framework} · {template.time_limit_minutes} minutes · {plural(template.hidden_tests.fail_to_pass, "hidden test")}{" "}
        to make pass, {template.hidden_tests.pass_to_pass} to keep passing
      </p>
      {template.tags.length > 0 && <p class="muted">Tags: {template.tags.join(", ")}</p>}
      <details>
        <summary>What candidates read: {template.statement.title}</summary>
        <pre class="statement" tabIndex={0}>
          {template.statement.body}
        </pre>
      </details>
      {error && <ErrorBox message={error} />}
      <button type="button" disabled={busy || !org} onClick={() => void use()} aria-label={`Use this template: ${template.title}`}>
        {busy ? "Copying…" : "Use this template"}
      </button>
    </article>
  );
}
