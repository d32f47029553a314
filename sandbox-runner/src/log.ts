/** One JSON object per line; callers pass event fields only, never secrets or job payloads. */
export type Logger = (event: string, fields?: Record<string, unknown>) => void;

export function createLogger(sink: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Logger {
  return (event, fields = {}) => {
    sink(JSON.stringify({ ts: new Date().toISOString(), level: levelOf(event), event, ...fields }));
  };
}

function levelOf(event: string): "info" | "warn" | "error" {
  if (event.endsWith("_failed") || event.endsWith("_error")) return "error";
  if (event.endsWith("_refused") || event.endsWith("_retry")) return "warn";
  return "info";
}
