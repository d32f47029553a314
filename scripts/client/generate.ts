// Regenerates client/src/schema.d.ts from the OpenAPI document of the API as it is now: starts
// the local stack on free ports, reads GET /api/v1/openapi.json, writes the declarations.
// Run it after changing a route's schemas; the e2e suite fails while the file is stale.
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { CLIENT_SCHEMA_FILE, clientSchema } from "../lib/client-schema";
import { ROOT } from "../lib/paths";
import { launchStack } from "../lib/stack";

const stack = await launchStack();
try {
  const response = await fetch(`${stack.apiUrl}/api/v1/openapi.json`);
  if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
  writeFileSync(CLIENT_SCHEMA_FILE, await clientSchema(await response.json()));
  console.log(`wrote ${relative(ROOT, CLIENT_SCHEMA_FILE)}`);
} finally {
  await stack.stop();
}
