import type { ExecutionExit, ExecutionStatus } from "../../domain/executions";
import { TICKETS_SCHEMA } from "../socket-tickets";

// One execution per object: its row, its output chunks (the replay), stdin that came before
// the runner did, and the browser tickets already used.
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS execution (
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  timeout_seconds INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  started_ms INTEGER,
  ended_ms INTEGER,
  connect_nonce TEXT NOT NULL,
  runner_joined INTEGER NOT NULL DEFAULT 0,
  exit TEXT,
  output_bytes INTEGER NOT NULL DEFAULT 0,
  output_dropped INTEGER NOT NULL DEFAULT 0,
  ended_synced INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS chunks (seq INTEGER PRIMARY KEY, stream TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pending (n INTEGER PRIMARY KEY AUTOINCREMENT, message TEXT NOT NULL, bytes INTEGER NOT NULL);
${TICKETS_SCHEMA}
`;

export type ExecutionRowData = {
  id: string;
  status: ExecutionStatus;
  timeout_seconds: number;
  created_ms: number;
  started_ms: number | null;
  ended_ms: number | null;
  connect_nonce: string;
  runner_joined: number;
  exit: string | null;
  output_bytes: number;
  output_dropped: number;
  ended_synced: number;
};

export type Chunk = {
  seq: number;
  stream: "stdout" | "stderr";
  data: string;
};

export function readExecution(sql: SqlStorage): ExecutionRowData | undefined {
  return sql.exec<ExecutionRowData>("SELECT * FROM execution").toArray()[0];
}

export function exitOf(row: ExecutionRowData): ExecutionExit | null {
  return row.exit ? (JSON.parse(row.exit) as ExecutionExit) : null;
}

/** Appends a chunk; its seq is one past the last (0 for the first). */
export function appendChunk(sql: SqlStorage, stream: Chunk["stream"], data: string, bytes: number): number {
  const seq = nextSeq(sql);
  sql.exec("INSERT INTO chunks (seq, stream, data) VALUES (?, ?, ?)", seq, stream, data);
  sql.exec("UPDATE execution SET output_bytes = output_bytes + ?", bytes);
  return seq;
}

export function chunksAfter(sql: SqlStorage, afterSeq: number): Chunk[] {
  return sql.exec<Chunk>("SELECT seq, stream, data FROM chunks WHERE seq > ? ORDER BY seq", afterSeq).toArray();
}

export function nextSeq(sql: SqlStorage): number {
  return sql.exec<{ seq: number }>("SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM chunks").one().seq;
}
