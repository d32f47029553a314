import { sql } from "drizzle-orm";
import { text } from "drizzle-orm/sqlite-core";

/** ISO 8601 UTC timestamps, as the API returns them. */
export const timestamp = (name: string) => text(name).notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`);
