// The AI assistant of an attempt (docs/api.md, "AI chat"): the conversation so far, and a
// message whose answer streams in as Server-Sent Events, shown as it comes.
import type { components } from "../../../client/src/index";
import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorBox, Loading } from "../components/states";
import { describe } from "../lib/errors";
import type { Backend } from "./backend";
import { utf8Length } from "./encoding";
import { Markdown } from "./markdown-view";
import { readSse } from "./sse";

type Message = components["schemas"]["AiChatMessage"];
type ChatEvent =
  | components["schemas"]["AiChatStartEvent"]
  | components["schemas"]["AiChatDeltaEvent"]
  | components["schemas"]["AiChatDoneEvent"]
  | components["schemas"]["AiChatErrorEvent"];

const PAGE = 100;
/** The API takes at most 32 KiB of shared file text with a message. */
const SHARE_LIMIT = 32 * 1024;

export interface SharedFile {
  path: string;
  content: string;
}

interface Props {
  backend: Backend;
  attemptId: string;
  /** False once the attempt is submitted (or before it starts): the conversation is read-only. */
  canSend: boolean;
  /** The file open in the editor, which the candidate may choose to show the assistant. */
  openFile?: () => SharedFile | null;
  onSent?: (messageChars: number) => void;
}

export function ChatPanel({ backend, attemptId, canSend, openFile, onSent }: Props) {
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [earlier, setEarlier] = useState(0);
  const [loadError, setLoadError] = useState<string>();
  const [draft, setDraft] = useState("");
  const [share, setShare] = useState(false);
  const [streaming, setStreaming] = useState<{ question: string; answer: string } | null>(null);
  const [sendError, setSendError] = useState<string>();
  const [status, setStatus] = useState("");
  const endRef = useRef<HTMLDivElement>(null);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    let alive = true;
    setLoadError(undefined);
    (async () => {
      const list = (page: number) =>
        backend.call(backend.client.GET("/api/v1/attempts/{attempt_id}/ai-chat/messages", { params: { path: { attempt_id: attemptId }, query: { page, limit: PAGE } } }));
      const first = await list(1);
      const last = first.pagination.pages > 1 ? await list(first.pagination.pages) : first;
      if (!alive) return;
      setMessages(last.items);
      setEarlier(last.pagination.current - 1);
    })().catch((error: unknown) => alive && setLoadError(describe(error)));
    return () => {
      alive = false;
    };
  }, [backend, attemptId, version]);

  useEffect(() => endRef.current?.scrollIntoView({ block: "nearest" }), [messages, streaming]);

  async function loadEarlier() {
    try {
      const page = await backend.call(
        backend.client.GET("/api/v1/attempts/{attempt_id}/ai-chat/messages", { params: { path: { attempt_id: attemptId }, query: { page: earlier, limit: PAGE } } }),
      );
      setMessages((m) => [...page.items, ...(m ?? [])]);
      setEarlier(earlier - 1);
    } catch (error) {
      setLoadError(describe(error));
    }
  }

  const shared = share ? openFile?.() ?? null : null;
  const tooLarge = shared !== null && utf8Length(shared.content) > SHARE_LIMIT;

  async function send(event: Event) {
    event.preventDefault();
    const message = draft.trim();
    if (!message || streaming) return;
    setSendError(undefined);
    setStreaming({ question: message, answer: "" });
    setStatus("The assistant is answering…");
    const file = share ? openFile?.() ?? null : null;
    const files = file && utf8Length(file.content) <= SHARE_LIMIT ? [{ path: file.path, content: file.content }] : undefined;
    let finished = false;
    try {
      const stream = await backend.call(
        backend.client.POST("/api/v1/attempts/{attempt_id}/ai-chat/messages", {
          params: { path: { attempt_id: attemptId } },
          body: { message, ...(files ? { files } : {}) },
          parseAs: "stream",
        }),
      );
      setDraft("");
      onSent?.(message.length);
      if (!stream) throw new Error("The answer came without a body; reload the conversation.");
      let answer = "";
      for await (const sse of readSse(stream)) {
        const data = JSON.parse(sse.data) as ChatEvent;
        if (data.type === "start") setMessages((m) => [...(m ?? []), data.message]);
        else if (data.type === "delta") {
          answer += data.text;
          setStreaming({ question: message, answer });
        } else if (data.type === "done") {
          finished = true;
          setMessages((m) => [...(m ?? []), data.message]);
          setStatus("The assistant has answered.");
        } else if (data.type === "error") {
          finished = true;
          const failed = data.message;
          if (failed) setMessages((m) => [...(m ?? []), failed]);
          setSendError(`The assistant could not finish its answer: ${data.detail}`);
          setStatus("");
        }
      }
      if (!finished) {
        setSendError("The answer was cut off before its end; the conversation below is reloaded from the service.");
        setVersion((v) => v + 1);
      }
    } catch (error) {
      setSendError(describe(error));
      setStatus("");
    } finally {
      setStreaming(null);
    }
  }

  return (
    <div class="chat">
      {loadError && <ErrorBox message={loadError} onRetry={() => setVersion((v) => v + 1)} />}
      {!messages && !loadError && <Loading what="Loading the conversation" />}
      {messages && (
        <div class="chat-log" tabIndex={0} role="region" aria-label="Conversation with the AI assistant">
          {earlier > 0 && (
            <button type="button" class="secondary" onClick={() => void loadEarlier()}>
              Show earlier messages
            </button>
          )}
          {messages.length === 0 && !streaming && <p class="muted">No messages yet. The assistant helps you understand and debug; it does not write the solution.</p>}
          {messages.map((m) => (
            <ChatMessage key={m.message_id} message={m} />
          ))}
          {streaming && streaming.answer !== "" && (
            <div class="chat-message assistant">
              <p class="chat-who">Assistant (answering…)</p>
              <p class="pre-wrap">{streaming.answer}</p>
            </div>
          )}
          <div ref={endRef} />
        </div>
      )}
      <p class="visually-hidden" role="status" aria-live="polite">
        {status}
      </p>
      {sendError && <ErrorBox message={sendError} />}
      {canSend ? (
        <form class="chat-form" onSubmit={(e) => void send(e)}>
          <label for="chat-message">Message to the assistant</label>
          <textarea
            id="chat-message"
            value={draft}
            maxLength={4000}
            rows={3}
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void send(e);
            }}
            aria-describedby="chat-hint"
          />
          <p id="chat-hint" class="muted small">
            Ctrl+Enter sends. At most 4,000 characters; 10 messages a minute.
          </p>
          {openFile && (
            <div class="check">
              <input id="chat-share" type="checkbox" checked={share} onChange={(e) => setShare(e.currentTarget.checked)} />
              <label for="chat-share">Show the assistant the open file{shared ? ` (${shared.path})` : ""}</label>
            </div>
          )}
          {tooLarge && <p class="bad small">The open file is over 32 KiB, more than the assistant takes; it will not be shared.</p>}
          <button type="submit" disabled={!!streaming || draft.trim() === ""}>
            {streaming ? "Answering…" : "Send"}
          </button>
        </form>
      ) : (
        <p class="muted">The conversation is read-only: messages can be sent only while the attempt is in progress.</p>
      )}
    </div>
  );
}

function ChatMessage({ message }: { message: Message }) {
  const user = message.role === "user";
  return (
    <div class={`chat-message ${message.role}`}>
      <p class="chat-who">
        {user ? "You" : "Assistant"}
        {message.files.length > 0 && <span class="muted"> · shared {message.files.map((f) => f.path).join(", ")}</span>}
      </p>
      {user ? <p class="pre-wrap">{message.content}</p> : <Markdown source={message.content} headingBase={4} />}
      {message.status === "error" && <p class="bad small">This answer failed{message.error ? `: ${message.error}` : ""}.</p>}
    </div>
  );
}
