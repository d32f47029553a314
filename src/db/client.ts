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

/**
 * A query built once per database instance and run with `sql.placeholder` values. Drizzle's
 * builders render SQL by walking the schema on every call, which on the hottest reads costs as
 * much CPU as the rest of the request; a prepared query renders once and binds per call.
 */
export function preparedQuery<Q>(build: (db: Database) => Q): (db: Database) => Q {
  const built = new WeakMap<Database, Q>();
  return (db) => {
    let query = built.get(db);
    if (!query) {
      query = build(db);
      built.set(db, query);
    }
    return query;
  };
}
