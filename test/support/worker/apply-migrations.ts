import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// The files of a worker share one runtime and its storage (the project runs with isolate off:
// a runtime per file cost 220 CPU-s of the suite's). Each file still starts on an empty
// database, as it would in a runtime of its own; a row another file left (a job whose lease
// ran out, say) is found by every query that scans a table, and tests count what they find.
// What the migrations themselves insert (the plans) is the database's, not a file's.
const seeded = new Set(env.TEST_MIGRATIONS.flatMap((m) => m.queries.flatMap((q) => [...q.matchAll(/INSERT\s+(?:OR\s+\w+\s+)?INTO\s+"?(\w+)"?/gi)].map((match) => match[1]!))));
const { results } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations'").all<{ name: string }>();
const owned = results.filter(({ name }) => !seeded.has(name));
if (owned.length > 0) {
  // Deferred, the foreign keys are checked once every table is empty, whatever the order.
  await env.DB.batch([env.DB.prepare("PRAGMA defer_foreign_keys = on"), ...owned.map(({ name }) => env.DB.prepare(`DELETE FROM "${name}"`))]);
}
