import { getTableColumns, is, SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * One row's values in the table's column order, unset columns at their schema defaults: the
 * SELECT of an insert that is conditional in SQL, which drizzle's insert-select expects whole.
 * Values go through their column's mapping (JSON, booleans) as a plain insert's would.
 */
export function rowValues<T extends SQLiteTable>(table: T, row: T["$inferInsert"]): SQL {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const value = (row as Record<string, unknown>)[key];
    if (value !== undefined) return sql`${sql.param(value, column)}`;
    return is(column.default, SQL) ? column.default : sql`${column.default ?? null}`;
  });
  return sql.join(values, sql`, `);
}
