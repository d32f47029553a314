// The candidate's terminal as staff see it in a live session: each program the candidate runs is
// announced by the session (`execution`), and its output is watched over the execution's own
// socket as a staff watcher (docs/api.md, "Live code execution"), read-only, reconnecting with a
// fresh ticket like the candidate's terminal.
import { useEffect, useRef, useState } from "preact/hooks";
import { ExecutionSession } from "../candidate/execution-session";
import type { TerminalView } from "../candidate/terminal-view";
import { api, call } from "../lib/data";
import { describe } from "../lib/errors";

export function WatchedTerminal({ executionId }: { executionId: string | null }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<TerminalView | null>(null);
  const [words, setWords] = useState("The candidate has run no program in this session yet.");

  useEffect(() => () => view.current?.dispose(), []);

  useEffect(() => {
    if (!executionId) return;
    let session: ExecutionSession | null = null;
    let alive = true;
    const ticket = async () => (await call(api.POST("/api/v1/code-execution/{execution_id}/ws-ticket", { params: { path: { execution_id: executionId } } }))).ws_ticket;
    void (async () => {
      try {
        const { openTerminal } = await import("../candidate/terminal-view");
        view.current ??= openTerminal(host.current!);
        const tv = view.current;
        const execution = await call(api.GET("/api/v1/code-execution/{execution_id}", { params: { path: { execution_id: executionId } } }));
        const first = await ticket();
        if (!alive) return;
        tv.terminal.reset();
        tv.terminal.write(`\x1b[36m$ ${execution.language === "node" ? "node" : "python3"} ${execution.file ?? ""}\x1b[0m\r\n`);
        setWords(`The candidate is running ${execution.file ?? "a program"}.`);
        session = new ExecutionSession({
          wsUrl: execution.ws_url,
          ticket: first,
          freshTicket: ticket,
          connect: (url) => new WebSocket(url),
          onOutput: (stream, data) => tv.terminal.write(stream === "stderr" ? `\x1b[31m${data}\x1b[0m` : data),
          onExit: (exit) => {
            const ended = exit.status === "exited" ? `The program exited with code ${exit.code ?? "unknown"}.` : `The program ended: ${exit.status}.`;
            tv.terminal.write(`\r\n\x1b[36m${ended}\x1b[0m\r\n`);
            setWords(ended);
          },
          onError: (detail) => setWords(detail),
        });
        session.start();
      } catch (error) {
        if (alive) setWords(describe(error));
      }
    })();
    return () => {
      alive = false;
      session?.close();
    };
  }, [executionId]);

  return (
    <section class="terminal-area" aria-labelledby="terminal-title">
      <div class="terminal-bar">
        <h2 id="terminal-title">The candidate's terminal</h2>
        <span class="muted small" role="status" aria-live="polite">
          {words}
        </span>
      </div>
      <div class="terminal-host" ref={host} aria-label="The candidate's program output" role="region" />
    </section>
  );
}
