import { describe, expect, it } from "vitest";
import {
  allKgrams,
  compareSides,
  comparedFiles,
  fingerprintFile,
  mirrored,
  SIMILARITY_LIMITS,
  tokenize,
  type SourceFile,
} from "../../src/domain/similarity";

// One small task, solved three ways in each language: "sum the stock of an inventory CSV by
// SKU, then list the SKUs by total value, most valuable first, with a formatted report line".

const JS_ORIGINAL = `// Inventory report: totals per SKU from "sku,qty,price" lines.
export function parseLines(text) {
  const rows = [];
  for (const raw of text.split("\\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [sku, qty, price] = line.split(",");
    rows.push({ sku, qty: Number(qty), price: Number(price) });
  }
  return rows;
}

export function totalsBySku(rows) {
  const totals = new Map();
  for (const row of rows) {
    const current = totals.get(row.sku) ?? { sku: row.sku, qty: 0, value: 0 };
    current.qty += row.qty;
    current.value += row.qty * row.price;
    totals.set(row.sku, current);
  }
  return [...totals.values()].sort((a, b) => b.value - a.value || a.sku.localeCompare(b.sku));
}

export function formatReport(text) {
  const lines = [];
  for (const total of totalsBySku(parseLines(text))) {
    lines.push(total.sku.padEnd(10) + String(total.qty).padStart(6) + total.value.toFixed(2).padStart(12));
  }
  return lines.join("\\n");
}
`;

// The same code: every name changed, comments rewritten, reformatted (no semicolons, other line breaks).
const JS_RENAMED = `/**
 * Builds the stock summary.
 */
export function readStock(input)
{
  const items = []
  for (const l of input.split("\\n"))
  {
    const entry = l.trim()
    if (entry === "" || entry.startsWith("#")) continue // skip blanks and comments
    const [code, count, cost] = entry.split(",")
    items.push({ code, count: Number(count), cost: Number(cost), })
  }
  return items
}

export function sumPerCode(items) {
  const acc = new Map()
  for (const it of items) {
    const cur = acc.get(it.code) ?? {
      code: it.code,
      count: 0,
      worth: 0,
    }
    cur.count += it.count
    cur.worth += it.count * it.cost
    acc.set(it.code, cur)
  }
  return [...acc.values()].sort(
    (x, y) => y.worth - x.worth || x.code.localeCompare(y.code),
  )
}

/* Prints one line per code. */
export function render(input) {
  const out = []
  for (const t of sumPerCode(readStock(input))) {
    out.push(
      t.code.padEnd(10) + String(t.count).padStart(6) + t.worth.toFixed(2).padStart(12),
    )
  }
  return out.join("\\n")
}
`;

// Another candidate's own solution to the same task.
const JS_INDEPENDENT = `const byValue = (left, right) => {
  if (right.value !== left.value) return right.value - left.value;
  return left.sku < right.sku ? -1 : left.sku > right.sku ? 1 : 0;
};

export function formatReport(csv) {
  const table = {};
  csv
    .split(/\\r?\\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .forEach((l) => {
      const parts = l.split(",").map((p) => p.trim());
      const qty = parseInt(parts[1], 10);
      const price = parseFloat(parts[2]);
      if (!table[parts[0]]) table[parts[0]] = { sku: parts[0], qty: 0, value: 0 };
      table[parts[0]].qty = table[parts[0]].qty + qty;
      table[parts[0]].value = table[parts[0]].value + qty * price;
    });
  return Object.values(table)
    .sort(byValue)
    .map(({ sku, qty, value }) => [sku.padEnd(10), qty.toString().padStart(6), value.toFixed(2).padStart(12)].join(""))
    .join("\\n");
}
`;

const PY_ORIGINAL = `"""Inventory report: totals per SKU from "sku,qty,price" lines."""


def parse_lines(text):
    rows = []
    for raw in text.split("\\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        sku, qty, price = line.split(",")
        rows.append({"sku": sku, "qty": int(qty), "price": float(price)})
    return rows


def totals_by_sku(rows):
    totals = {}
    for row in rows:
        current = totals.setdefault(row["sku"], {"sku": row["sku"], "qty": 0, "value": 0.0})
        current["qty"] += row["qty"]
        current["value"] += row["qty"] * row["price"]
    return sorted(totals.values(), key=lambda t: (-t["value"], t["sku"]))


def format_report(text):
    lines = []
    for total in totals_by_sku(parse_lines(text)):
        lines.append(f"{total['sku']:<10}{total['qty']:>6}{total['value']:>12.2f}")
    return "\\n".join(lines)
`;

const PY_RENAMED = `# stock summary helpers


def read_stock(data):
    # one dict per line
    items = []
    for l in data.split("\\n"):
        entry = l.strip()
        if not entry or entry.startswith("#"):
            continue
        code, count, cost = entry.split(",")
        items.append({"code": code, "count": int(count), "cost": float(cost)})
    return items


def sum_per_code(items):
    acc = {}
    for it in items:
        cur = acc.setdefault(
            it["code"], {"code": it["code"], "count": 0, "worth": 0.0}
        )
        cur["count"] += it["count"]
        cur["worth"] += it["count"] * it["cost"]
    return sorted(acc.values(), key=lambda x: (-x["worth"], x["code"]))


def render(data):
    out = []
    for t in sum_per_code(read_stock(data)):
        out.append(f"{t['code']:<10}{t['count']:>6}{t['worth']:>12.2f}")
    return "\\n".join(out)
`;

const PY_INDEPENDENT = `from collections import defaultdict


def format_report(csv_text):
    qty = defaultdict(int)
    value = defaultdict(float)
    for line in csv_text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            sku, q, p = (part.strip() for part in line.split(","))
            qty[sku] += int(q)
            value[sku] += int(q) * float(p)
    order = sorted(qty, key=lambda s: (-value[s], s))
    return "\\n".join("%-10s%6d%12.2f" % (s, qty[s], value[s]) for s in order)
`;

const side = (...files: SourceFile[]) => files.map(fingerprintFile);
const js = (text: string, path = "src/report.js"): SourceFile => ({ path, text });
const py = (text: string, path = "report.py"): SourceFile => ({ path, text });
const none = new Set<number>();

describe("similarity fingerprints", () => {
  it("tokens leave out comments, whitespace and names: a renamed, reformatted copy has the same tokens", () => {
    expect(tokenize("a.js", JS_RENAMED).tokens).toEqual(tokenize("a.js", JS_ORIGINAL).tokens);
    expect(tokenize("a.py", PY_RENAMED).tokens).toEqual(tokenize("a.py", PY_ORIGINAL).tokens);
    // Keywords stay: a loop is not a condition.
    expect(tokenize("a.js", "if (a) b()").tokens).not.toEqual(tokenize("a.js", "while (a) b()").tokens);
  });

  it("scores an identical solution 1, a renamed copy high and an independent solution low, in JavaScript and Python", () => {
    for (const [make, original, renamed, independent] of [
      [js, JS_ORIGINAL, JS_RENAMED, JS_INDEPENDENT],
      [py, PY_ORIGINAL, PY_RENAMED, PY_INDEPENDENT],
    ] as const) {
      expect(compareSides(side(make(original)), side(make(original)), none).similarity).toBe(1);
      expect(compareSides(side(make(original)), side(make(renamed)), none).similarity).toBeGreaterThanOrEqual(0.8);
      expect(compareSides(side(make(original)), side(make(independent)), none).similarity).toBeLessThanOrEqual(0.3);
      expect(compareSides(side(make(renamed)), side(make(independent)), none).similarity).toBeLessThanOrEqual(0.3);
    }
    // Across languages nothing is shared.
    expect(compareSides(side(js(JS_ORIGINAL)), side(py(PY_ORIGINAL)), none).similarity).toBe(0);
  });

  it("regions point at the copied lines on both sides, with their text", () => {
    // The copy sits below a different header in another file: its lines are shifted.
    const header = "import { other } from './other.js';\n\nexport const unrelated = other(1, 2, 3);\n\n";
    const { similarity, regions } = compareSides(side(js(JS_ORIGINAL)), side(js(header + JS_RENAMED, "lib/stock.js")), none);
    expect(similarity).toBeGreaterThan(0.8);
    expect(regions.length).toBeGreaterThan(0);
    const top = regions[0]!;
    expect(top.left.path).toBe("src/report.js");
    expect(top.right.path).toBe("lib/stock.js");
    // The whole original (lines 2..30: the code after the comment) against the copy's, 4 lines down.
    expect(top.left.start_line).toBe(2);
    expect(top.left.end_line).toBe(30);
    expect(top.right.start_line).toBe(4 + 4);
    expect(top.right.end_line).toBe(4 + 43);
    expect(top.left.text.split("\n")[0]).toBe("export function parseLines(text) {");
    expect(top.right.text.split("\n")[0]).toBe("export function readStock(input)");
    // Seen from the other side, the same region with its sides swapped.
    expect(mirrored(regions)[0]).toEqual({ left: top.right, right: top.left, tokens: top.tokens });
  });

  it("leaves out what both sides keep of the task's own code", () => {
    const base = js(JS_ORIGINAL);
    const added = "\nexport function lowStock(rows, limit) {\n  return rows.filter((row) => row.qty < limit).map((row) => row.sku).sort();\n}\n";
    const ownAddition = "\nexport const cheapest = (rows) => rows.reduce((best, row) => (row.price < best.price ? row : best));\n";
    // Two changes of the same file that add different code share only the file's base.
    const left = side(js(JS_ORIGINAL + added));
    const right = side(js(JS_ORIGINAL + ownAddition));
    expect(compareSides(left, right, none).similarity).toBeGreaterThan(0.5);
    expect(compareSides(left, right, allKgrams([base])).similarity).toBe(0);
    // The same addition still matches once the base is left out.
    expect(compareSides(left, side(js(JS_ORIGINAL + added)), allKgrams([base])).similarity).toBe(1);
  });

  it("bounds the regions per pair and the text of each", () => {
    // Many copied functions apart from each other: each one a region of its own.
    const fn = (i: number) => `export function f${i}(a, b) {\n${"  if (a > b) { return a - b * 2 + Math.max(a, b, 3); }\n".repeat(45)}  return ${i};\n}\n`;
    const text = Array.from({ length: 12 }, (_, i) => fn(i)).join("\n// apart\nconst x = 1;\n");
    const { regions } = compareSides(side(js(text)), side(js(text)), none);
    expect(regions.length).toBe(SIMILARITY_LIMITS.regionsPerPair);
    for (const r of regions) {
      expect(r.left.text.split("\n").length).toBeLessThanOrEqual(SIMILARITY_LIMITS.regionLines);
      expect(r.left.text.length).toBeLessThanOrEqual(SIMILARITY_LIMITS.regionChars);
    }
    expect(regions.some((r) => r.left.truncated && r.left.end_line - r.left.start_line + 1 > SIMILARITY_LIMITS.regionLines)).toBe(true);
  });

  it("compares text files within the size limits, by path", () => {
    const bytes = (s: string) => new TextEncoder().encode(s);
    const files = comparedFiles([
      { path: "b.js", content: bytes("b") },
      { path: "a.js", content: bytes("a") },
      { path: "image.png", content: new Uint8Array([0xff, 0xd8, 0xff]) },
      { path: "huge.js", content: new Uint8Array(SIMILARITY_LIMITS.fileBytes + 1).fill(0x61) },
    ]);
    expect(files).toEqual([
      { path: "a.js", text: "a" },
      { path: "b.js", text: "b" },
    ]);
  });
});
