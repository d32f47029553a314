// `npm run templates:build`: writes src/services/templates/catalogue.json from templates/<slug>/
// (scripts/templates/catalogue.ts says how). Run it after changing a template and commit both.
import { writeFile } from "node:fs/promises";
import { buildCatalogue, CATALOGUE_FILE, serializeCatalogue } from "./catalogue";

const catalogue = await buildCatalogue();
await writeFile(CATALOGUE_FILE, serializeCatalogue(catalogue));
for (const t of catalogue.templates) {
  console.error(`[templates] ${t.slug}: ${t.fail_to_pass.length} FAIL_TO_PASS, ${t.pass_to_pass.length} PASS_TO_PASS`);
}
console.error(`[templates] wrote ${CATALOGUE_FILE}`);
