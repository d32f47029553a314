// Live execution of one file of the attempt (docs/api.md, "Live code execution"): its output in
// a terminal, typed input sent line by line, Terminate, and a dropped connection restored
// without losing or repeating output.
import type { components } from "../../../client/src/index";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call } from "../lib/data";
import { describe } from "../lib/errors";
import { ExecutionSession, type ConnectionState, type ExecutionExit } from "./execution-session";
import { LineEditor } from "./terminal-line";
import type { TerminalView } from "./terminal-view";

type Execution = components["schemas"]["Execution"];

interface Props {
  attemptId: string;
  /** The file open in the editor. */
  file: string | null;
  /** Saves what is unsaved, since the program runs the saved files; an error in words, or null. */
  beforeRun: () => Promise<string | null>;
}

/** The interpreter of a file, or null when it cannot be run live (only `node` and `python3` can). */
export function runtimeOf(path: string | null): "node" | "python" | null {
  if (!path) return null;
  if (/\.(js|mjs|cjs)$/i.test(path)) return "node";
  if (/\.py$/i.test(path)) return "python";
  return null;
}

function exitWords(exit: ExecutionExit, limits: Execution["limits"] | undefined): string {
  switch (exit.status) {
    case "exited":
      return exit.signal ? `The program was ended by signal ${exit.signal}.` : `The program exited with code ${exit.code ?? "unknown"}.`;
    case "timed_out":
      return `The program was stopped at its time limit${limits ? ` of ${limits.timeout_seconds} s` : ""}.`;
    case "killed":
      switch (exit.cause) {
        case "terminated":
          return "The program was terminated.";
        case "output_limit":
          return "The program was stopped: its output passed 1 MiB.";
        case "cpu":
          return "The program was stopped at its CPU time limit.";
        case "memory":
          return "The program was stopped at its memory limit.";
        case "workspace":
          return "The program was stopped: it wrote more to disk than allowed.";
        default:
          return "The program was stopped.";
      }
    case "error":
      return `The program could not be run: ${exit.detail ?? "the sandbox failed"}.`;
  }
}

const CONNECTION_WORDS: Record<ConnectionState, string> = {
  connecting: "Connecting…",
  open: "Running",
  reconnecting: "Connection lost; reconnecting…",
  ended: "Ended",
  lost: "Disconnected",
};

export function TerminalPanel({ attemptId, file, beforeRun }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<TerminalView | null>(null);
  const session = useRef<ExecutionSession | null>(null);
  const line = useRef(new LineEditor());
  const [running, setRunning] = useState<{ file: string; connection: ConnectionState } | null>(null);
  const [message, setMessage] = useState("");
  const [error, setError] = useState<string>();
  const [starting, setStarting] = useState(false);
  const runtime = runtimeOf(file);

  useEffect(
    () => () => {
      session.current?.close();
      view.current?.dispose();
    },
    [],
  );

  async function terminal(): Promise<TerminalView> {
    if (view.current) return view.current;
    const { openTerminal } = await import("./terminal-view");
    const opened = openTerminal(host.current!);
    opened.terminal.onData((data) => {
      const live = session.current;
      if (!live) return;
      const input = line.current.input(data);
      if (input.echo) opened.terminal.write(input.echo);
      for (const text of input.send) live.stdin(text);
      if (input.eof) live.stdin("", true);
      if (input.interrupt) live.terminate();
    });
    view.current = opened;
    return opened;
  }

  async function run() {
    if (!file || !runtime || starting) return;
    setStarting(true);
    setError(undefined);
    try {
      const saveError = await beforeRun();
      if (saveError) {
        setError(`Not run: ${saveError}`);
        return;
      }
      const tv = await terminal();
      const execution = await call(api.POST("/api/v1/code-execution/execute", { body: { attempt_id: attemptId, language: runtime, file } }));
      session.current?.close();
      line.current.reset();
      tv.terminal.reset();
      tv.terminal.write(`\x1b[36m$ ${runtime === "node" ? "node" : "python3"} ${file}\x1b[0m\r\n`);
      setRunning({ file, connection: "connecting" });
      setMessage(`Running ${file}. Type input and press Enter to send it.`);
      const live = new ExecutionSession({
        wsUrl: execution.ws_url,
        ticket: execution.ws_ticket,
        freshTicket: async () =>
          (await call(api.POST("/api/v1/code-execution/{execution_id}/ws-ticket", { params: { path: { execution_id: execution.execution_id } } }))).ws_ticket,
        connect: (url) => new WebSocket(url),
        onOutput: (stream, data) => tv.terminal.write(stream === "stderr" ? `\x1b[31m${data}\x1b[0m` : data),
        onExit: (exit) => {
          const words = exitWords(exit, execution.limits);
          tv.terminal.write(`\r\n\x1b[36m${words}\x1b[0m\r\n`);
          setMessage(words);
          session.current = null;
          setRunning(null);
        },
        onError: (detail) => {
          tv.terminal.write(`\r\n\x1b[33m${detail}\x1b[0m\r\n`);
          setMessage(detail);
        },
        onConnection: (connection) => {
          setRunning((r) => (r ? { ...r, connection } : r));
          if (connection === "lost") {
            session.current = null;
            setRunning(null);
          }
        },
      });
      session.current = live;
      live.start();
      tv.terminal.focus();
    } catch (e) {
      setError(describe(e));
    } finally {
      setStarting(false);
    }
  }

  return (
    <section class="terminal-area" aria-labelledby="terminal-title">
      <div class="terminal-bar">
        <h2 id="terminal-title">Terminal</h2>
        <button type="button" onClick={() => void run()} disabled={!runtime || starting || running !== null} title={runtime ? undefined : "Only .js, .mjs, .cjs and .py files can be run"}>
          {starting ? "Starting…" : file && runtime ? `Run ${file.split("/").pop()}` : "Run file"}
        </button>
        <button type="button" class="danger" disabled={!running} onClick={() => session.current?.terminate()}>
          Terminate
        </button>
        <span class="muted small">
          {running ? CONNECTION_WORDS[running.connection] : runtime ? "Runs the saved file with its input typed here (Ctrl+C stops, Ctrl+D ends input)." : "Open a .js or .py file to run it."}
        </span>
      </div>
      <p class="visually-hidden" role="status" aria-live="polite">
        {message}
      </p>
      {error && (
        <p class="bad small" role="alert">
          {error}
        </p>
      )}
      <div class="terminal-host" ref={host} aria-label="Program output and input" role="region" />
    </section>
  );
}
