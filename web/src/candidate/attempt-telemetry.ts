// The workspace's telemetry in the browser: a batcher sending to POST /siem/events/batch with
// the page's credential, the typing windows, and the page's focus and visibility. Metadata only:
// the events carry counts, sizes and known file paths, never text.
import { effect } from "@preact/signals";
import { online } from "../lib/online";
import type { Backend } from "./backend";
import type { EditorActivity } from "./editors";
import { TelemetryBatcher, TypingWindows, type TelemetryInput } from "./telemetry";

export interface AttemptTelemetry {
  record(input: TelemetryInput): void;
  /** The editor's activity in `file`; `known` false for a file the API does not know yet (new and unsaved). */
  activity(file: () => { path: string; known: boolean } | null): EditorActivity;
  /** `path` was deleted: no event names it from now on, buffered ones included. */
  forgetFile(path: string): void;
  flush(): Promise<void>;
  dispose(): void;
}

function newId(): string {
  return crypto.randomUUID();
}

export function attemptTelemetry(backend: Backend, attemptId: string): AttemptTelemetry {
  const batcher = new TelemetryBatcher({
    send: async (events) => {
      await backend.call(backend.client.POST("/api/v1/siem/events/batch", { body: { attempt_id: attemptId, events } }));
    },
    newId,
    online: () => online.value,
  });
  const typing = new TypingWindows((input, at) => batcher.record(input, at));
  const stopOnline = effect(() => batcher.setOnline(online.value));

  let blurredAt: number | null = null;
  let hiddenAt: number | null = null;
  const onBlur = () => {
    blurredAt = Date.now();
    typing.close();
    batcher.record({ kind: "focus_lost" });
  };
  const onFocus = () => {
    batcher.record(blurredAt === null ? { kind: "focus_gained" } : { kind: "focus_gained", away_ms: Math.min(Date.now() - blurredAt, 7 * 86_400_000) });
    blurredAt = null;
  };
  const onVisibility = () => {
    if (document.visibilityState === "hidden") {
      hiddenAt = Date.now();
      typing.close();
      batcher.record({ kind: "visibility_hidden" });
      void batcher.flush();
    } else {
      batcher.record(hiddenAt === null ? { kind: "visibility_visible" } : { kind: "visibility_visible", away_ms: Math.min(Date.now() - hiddenAt, 7 * 86_400_000) });
      hiddenAt = null;
    }
  };
  window.addEventListener("blur", onBlur);
  window.addEventListener("focus", onFocus);
  document.addEventListener("visibilitychange", onVisibility);

  return {
    record: (input) => batcher.record(input),
    activity: (file) => ({
      key: (kind) => {
        const f = file();
        typing.key(f?.known ? f.path : undefined, kind);
      },
      paste: (sizeBytes, lineCount, internal) => {
        const f = file();
        batcher.record({ kind: "paste", size_bytes: sizeBytes, line_count: lineCount, source: internal ? "internal" : "external", ...(f?.known ? { file_path: f.path } : {}) });
      },
      copy: (sizeBytes, lineCount) => {
        const f = file();
        batcher.record({ kind: "copy", size_bytes: sizeBytes, line_count: lineCount, ...(f?.known ? { file_path: f.path } : {}) });
      },
    }),
    forgetFile: (path) => {
      typing.close();
      batcher.forgetFile(path);
    },
    flush: () => {
      typing.close();
      return batcher.flush();
    },
    dispose: () => {
      typing.close();
      void batcher.flush();
      batcher.dispose();
      stopOnline();
      window.removeEventListener("blur", onBlur);
      window.removeEventListener("focus", onFocus);
      document.removeEventListener("visibilitychange", onVisibility);
    },
  };
}
