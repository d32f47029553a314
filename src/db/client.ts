import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = ReturnType<typeof connect>;

function connect(d1: D1Database) {
  return drizzle(d1, { schema });
}

/**
 * Building a drizzle instance walks the whole schema, which a request would otherwise pay for
 * each time it asks for the database. The instance holds no request state, only the binding,
 * so one per binding serves every request of the isolate.
 */
const instances = new WeakMap<D1Database, Database>();

export function database(d1: D1Database): Database {
  let db = instances.get(d1);
  if (!db) {
    db = connect(d1);
    instances.set(d1, db);
  }
  return db;
}
