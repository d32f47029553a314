import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DEV_DIR = join(ROOT, ".dev");
export const DEV_VARS = join(ROOT, ".dev.vars");
/** Local D1/R2/DO state of `npm start`; ASSAY_STATE_DIR points a second stack elsewhere. */
export const STATE_DIR = process.env.ASSAY_STATE_DIR ?? join(DEV_DIR, "state");
