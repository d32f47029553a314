// A score report's evidence (docs/scoring.md) is open-ended JSON per subscore: figures, lists
// of test ids, tables of files and lint findings, nested parts. These decide how a value is
// shown (a figure, a list, a table, a nested group) whatever the rubric version adds. Pure.

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isScalar = (value: unknown) => value === null || ["string", "number", "boolean"].includes(typeof value);

export type EvidenceShape =
  | { kind: "scalar"; text: string }
  | { kind: "list"; items: string[] }
  | { kind: "table"; columns: string[]; rows: Record<string, unknown>[] }
  | { kind: "group"; entries: [string, unknown][] };

export function formatScalar(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number" || typeof value === "string") return String(value);
  return JSON.stringify(value);
}

/** How to show `value`: lists of scalars as lists, lists of flat objects as tables, objects as groups. */
export function shapeOf(value: unknown): EvidenceShape {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => isRecord(v) && Object.values(v).every(isScalar))) {
      const rows = value as Record<string, unknown>[];
      const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
      return { kind: "table", columns, rows };
    }
    return { kind: "list", items: value.map(formatScalar) };
  }
  if (isRecord(value)) return { kind: "group", entries: Object.entries(value) };
  return { kind: "scalar", text: formatScalar(value) };
}
