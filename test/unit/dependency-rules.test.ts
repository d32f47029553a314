import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

// `npm test` runs `depcruise` on src/ with .dependency-cruiser.cjs; these tests show that its
// rules refuse what the architecture forbids (and admit what it allows), on small trees.
const require = createRequire(import.meta.url);
const config = require("../../.dependency-cruiser.cjs") as { forbidden: IForbiddenRuleType[] };

const made: string[] = [];
afterAll(() => made.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** Violations in a tree of `files` (path → source), as `rule: from → to`. */
async function violations(files: Record<string, string>, roots = ["src"]): Promise<string[]> {
  const root = mkdtempSync(path.join(tmpdir(), "assay-layers-"));
  made.push(root);
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), source);
  }
  const result = await cruise(roots, {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts"] },
  });
  if (typeof result.output === "string") throw new Error("expected a cruise result object");
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

/** `from` importing `to` (both under src/), with `to` exporting a value. */
function importing(from: string, to: string, typeOnly = false): Record<string, string> {
  const spec = path.relative(path.dirname(from), to).replace(/\.ts$/, "");
  const specifier = spec.startsWith(".") ? spec : `./${spec}`;
  return {
    [`src/${to}`]: "export const value = 1;\nexport type Value = number;\n",
    [`src/${from}`]: typeOnly
      ? `import type { Value } from "${specifier}";\nexport const used: Value = 1;\n`
      : `import { value } from "${specifier}";\nexport const used = value;\n`,
  };
}

describe("the layering check", () => {
  it.each([
    ["lib/ids.ts", "domain/roles.ts"],
    ["domain/roles.ts", "db/tasks.queries.ts"],
    ["db/attempts.queries.ts", "http/auth.ts"],
    ["db/tasks.queries.ts", "services/storage.ts"],
    ["services/runner.ts", "durable/attempt/attempt-object.ts"],
    ["services/email.ts", "queues/email.consumer.ts"],
    ["services/identity-provider.ts", "http/errors.ts"],
    ["durable/attempt/attempt-object.ts", "flows/scoring.ts"],
    ["flows/scoring.ts", "routes/scores.routes.ts"],
    ["flows/invitation-mail.flow.ts", "queues/email.consumer.ts"],
    ["flows/runs.ts", "http/errors.ts"],
    ["http/auth.ts", "routes/params.ts"],
    ["queues/scoring.consumer.ts", "routes/scores.routes.ts"],
    ["routes/scores.routes.ts", "queues/scoring.consumer.ts"],
    ["env.ts", "durable/attempt/attempt-object.ts"],
    ["domain/queue-messages.ts", "db/tasks.queries.ts"],
    ["flows/invitation-mail.flow.ts", "queues/consume.ts"],
    ["routes/attempts.routes.ts", "durable/attempt/attempt-object.ts"],
    ["routes/tasks.routes.ts", "db/tasks.queries.ts"],
    ["routes/storage.routes.ts", "services/storage.ts"],
  ])("refuses %s importing %s", async (from, to) => {
    expect(await violations(importing(from, to))).toHaveLength(1);
  });

  it("refuses an upward import that only brings a type", async () => {
    expect(await violations(importing("db/attempts.queries.ts", "http/auth.ts", true))).toEqual([
      "db-imports-downward: src/db/attempts.queries.ts → src/http/auth.ts",
    ]);
  });

  it.each([
    ["routes/attempts.routes.ts", "http/errors.ts"],
    ["routes/attempts.routes.ts", "flows/scoring.ts"],
    ["routes/attempts.routes.ts", "domain/attempts.ts"],
    ["queues/scoring.consumer.ts", "flows/scoring.ts"],
    ["flows/scoring.ts", "durable/attempt/attempt-object.ts"],
    ["durable/attempt/attempt-object.ts", "services/runner.ts"],
    ["services/storage.ts", "db/tasks.queries.ts"],
    ["db/tasks.queries.ts", "domain/tasks.ts"],
    ["domain/tasks.ts", "lib/ids.ts"],
    ["http/auth.ts", "services/identity-provider.ts"],
    ["services/runner.ts", "env.ts"],
    ["durable/attempt/attempt-object.ts", "domain/queue-messages.ts"],
    ["env.ts", "domain/queue-messages.ts"],
    ["app.ts", "routes/attempts.routes.ts"],
  ])("admits %s importing %s", async (from, to) => {
    expect(await violations(importing(from, to))).toEqual([]);
  });

  it("runner jobs have one owner: only the lifecycle flow runs their queries; others may take the row type", async () => {
    expect(await violations(importing("flows/runner-jobs.flow.ts", "db/runner-jobs.queries.ts"))).toEqual([]);
    expect(await violations(importing("durable/attempt/attempt-types.ts", "db/runner-jobs.queries.ts", true))).toEqual([]);
    expect(await violations(importing("flows/runs/run-read.flow.ts", "db/runner-jobs.queries.ts"))).toEqual([
      "runner-jobs-have-one-owner: src/flows/runs/run-read.flow.ts → src/db/runner-jobs.queries.ts",
    ]);
    expect(await violations(importing("durable/attempt/attempt-runs.ts", "db/runner-jobs.queries.ts"))).toEqual([
      "runner-jobs-have-one-owner: src/durable/attempt/attempt-runs.ts → src/db/runner-jobs.queries.ts",
    ]);
  });

  it("services/runner/ is the runner client and the connect token: no queries, no storage, no third module", async () => {
    expect(await violations(importing("services/runner/runner-client.ts", "domain/runner-jobs.ts"))).toEqual([]);
    expect(await violations(importing("flows/executions.flow.ts", "services/runner/connect-token.ts"))).toEqual([]);
    expect(await violations(importing("services/runner/runner-client.ts", "db/tasks.queries.ts"))).toEqual([
      "runner-service-is-the-client: src/services/runner/runner-client.ts → src/db/tasks.queries.ts",
    ]);
    expect(await violations(importing("services/runner/runner-client.ts", "services/storage/artifact-storage.ts"))).toEqual([
      "runner-service-is-the-client: src/services/runner/runner-client.ts → src/services/storage/artifact-storage.ts",
    ]);
    expect(await violations(importing("flows/runner.flow.ts", "services/runner/job-dispatch.ts"))).toEqual([
      "runner-service-holds-two-modules: src/flows/runner.flow.ts → src/services/runner/job-dispatch.ts",
    ]);
  });

  it("refuses an import cycle inside one layer, type-only imports included", async () => {
    const found = await violations({
      "src/domain/a.ts": 'import type { B } from "./b";\nexport type A = { b?: B };\n',
      "src/domain/b.ts": 'import type { A } from "./a";\nexport type B = { a?: A };\n',
    });
    expect(found).toEqual(["no-circular: src/domain/a.ts → src/domain/b.ts"]);
  });

  it("refuses a lower layer importing a folder outside the layers", async () => {
    expect(await violations(importing("domain/tasks.ts", "helpers/strings.ts"))).toHaveLength(1);
  });
});

describe("the web app's imports", () => {
  const app = (specifier: string) => ({ "web/src/page.ts": `import { value } from "${specifier}";\nexport const used = value;\n` });
  const exporting = (file: string) => ({ [file]: "export const value = 1;\n" });

  it.each(["protocol/socket-messages.ts", "protocol/assessment-rules.ts"])("admits %s, the part of protocol/ written for it", async (shared) => {
    expect(await violations({ ...exporting(shared), ...app(`../../${shared.replace(/\.ts$/, "")}`) }, ["web"])).toEqual([]);
  });

  it.each(["protocol/jobs.ts", "src/domain/scoring.ts"])("refuses %s: the runner's messages, the Worker's code", async (other) => {
    expect(await violations({ ...exporting(other), ...app(`../../${other.replace(/\.ts$/, "")}`) }, ["web"])).toEqual([
      `web-app-imports-itself-and-the-client: web/src/page.ts → ${other}`,
    ]);
  });
});
