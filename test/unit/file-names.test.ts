import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// README, "Layout": a file's name is unique in the Worker and the protocol, and a file about a
// subject (tasks, billing, …) carries its layer's role, so a search result, a stack trace or
// an editor tab says which of the layers' `tasks` it is.
const ROOT = path.resolve(import.meta.dirname, "../..");

function tsFiles(dir: string): string[] {
  return (readdirSync(path.join(ROOT, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.posix.join(dir, f.split(path.sep).join("/")));
}

/** Each layer's role suffix, and the files that are its plumbing rather than a subject. */
const ROLES: { dir: string; suffix: string; plumbing: string[] }[] = [
  { dir: "src/routes", suffix: ".routes.ts", plumbing: ["params.ts", "table.ts", "schemas.ts", "task-fields.ts", "docs-assets.ts"] },
  { dir: "src/flows", suffix: ".flow.ts", plumbing: [] },
  { dir: "src/db", suffix: ".queries.ts", plumbing: ["client.ts", "rows.ts", "schema.ts"] },
  { dir: "src/db/schema", suffix: ".table.ts", plumbing: ["columns.ts"] },
  { dir: "src/queues", suffix: ".consumer.ts", plumbing: ["consume.ts", "handle-queue.ts"] },
];

describe("file names", () => {
  it("no two files of src/ and protocol/ share a name", () => {
    const byName = new Map<string, string[]>();
    for (const file of [...tsFiles("src"), ...tsFiles("protocol")]) {
      const name = path.posix.basename(file);
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    expect([...byName.values()].filter((paths) => paths.length > 1)).toEqual([]);
  });

  it("a layer's subject files carry its role", () => {
    const misnamed = ROLES.flatMap(({ dir, suffix, plumbing }) =>
      tsFiles(dir)
        .filter((f) => !ROLES.some((inner) => inner.dir !== dir && inner.dir.startsWith(`${dir}/`) && f.startsWith(`${inner.dir}/`)))
        .filter((f) => !f.endsWith(suffix) && !plumbing.includes(path.posix.relative(dir, f))),
    );
    expect(misnamed).toEqual([]);
  });

  it("a Durable Object's files start with its name", () => {
    const wrong = tsFiles("src/durable").filter((f) => {
      const [, , object, file] = f.split("/");
      return file !== undefined && !file.startsWith(`${object}-`);
    });
    expect(wrong).toEqual([]);
  });
});
