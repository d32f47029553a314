// A live session of an attempt as the pages use it (docs/web-app.md, "Live sessions"): the
// shared document and the awareness over the live socket (live-connection.ts), an editor
// binding for each shared file (y-codemirror.next: the text, remote cursors and selections, an
// undo history of this user's own edits). Yjs comes
// with this module only: pages load it when a task has live sessions on, so a take-home
// workspace does not download it.
import { EditorState, type Extension } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { yCollab, ySyncAnnotation, yUndoManagerKeymap } from "y-codemirror.next";
import { Awareness } from "y-protocols/awareness";
import * as Y from "yjs";
import type { LiveParticipant, LiveServerMessage } from "../../../protocol/socket-messages";
import { remoteEdit } from "../candidate/keystroke-recorder";
import { api, call } from "../lib/data";
import { LiveConnection, sharedFiles, type LiveState } from "./live-connection";
import { awarenessOf, awarenessStates } from "./presence";

export type { LiveState };

export interface LiveSessionOptions {
  attemptId: string;
  onMessage: (message: LiveServerMessage) => void;
  onState: (state: LiveState, detail?: string) => void;
  /** The awareness states changed: someone moved, opened a file, came or went. */
  onAwareness?: () => void;
}

export class LiveSession {
  readonly doc = new Y.Doc();
  readonly awareness = new Awareness(this.doc);
  readonly connection: LiveConnection;
  private role: LiveParticipant["role"] | null = null;
  private you: { user_id: string; name: string } | null = null;
  private file: string | null = null;
  private participants: LiveParticipant[] = [];
  /** Files whose text anyone edited in this session: the server has saved them to the changes by the time a run starts. */
  private readonly edited = new Set<string>();
  /** While the server's update is applied: who made it, for the keystroke recording. */
  private remoteAuthor: string | null = null;

  constructor(private readonly options: LiveSessionOptions) {
    // No presence before the server has said who this is: a cursor without a name is not drawn.
    this.awareness.setLocalState(null);
    this.connection = new LiveConnection({
      doc: this.doc,
      awareness: this.awareness,
      socketUrl: async () => {
        const ticket = await call(api.POST("/api/v1/attempts/{attempt_id}/live/ws-ticket", { params: { path: { attempt_id: options.attemptId } } }));
        return `${ticket.ws_url}?ticket=${encodeURIComponent(ticket.ws_ticket)}`;
      },
      connect: (url) => new WebSocket(url),
      onMessage: (message) => this.receive(message),
      onState: options.onState,
    });
    if (options.onAwareness) this.awareness.on("change", options.onAwareness);
    this.doc.on("beforeObserverCalls", (tr: Y.Transaction) => {
      this.remoteAuthor = tr.origin === this.connection ? this.authorOf(tr) : null;
    });
    this.doc.on("afterTransaction", () => {
      this.remoteAuthor = null;
    });
    sharedFiles(this.doc).observeDeep((events) => {
      for (const event of events) if (event.target instanceof Y.Text && typeof event.path[0] === "string") this.edited.add(event.path[0]);
    });
  }

  start(): void {
    this.connection.start();
  }

  /** The shared text of `path` and the editor extension bound to it, once the server has put it in the document. */
  async bind(path: string): Promise<{ text: string; extension: Extension }> {
    const ytext = await this.connection.openFile(path);
    return {
      text: ytext.toString(),
      extension: [
        yCollab(ytext, this.awareness, { undoManager: new Y.UndoManager(ytext) }),
        keymap.of(yUndoManagerKeymap),
        // The other side's edits reach the editor as y-codemirror's transactions: the keystroke
        // recording keeps them as remote, with their author (an undo of this user's own is not).
        EditorState.transactionExtender.of((tr) =>
          tr.annotation(ySyncAnnotation) && this.remoteAuthor !== null ? { annotations: remoteEdit.of({ author: this.remoteAuthor }) } : null,
        ),
      ],
    };
  }

  /** The file this user shows, for the others' presence line (and staff who follow the candidate). */
  showing(path: string | null): void {
    this.file = path;
    if (this.you && this.role) this.awareness.setLocalStateField("file", path);
  }

  /** The files edited in the document since this page joined, by anyone. */
  editedPaths(): string[] {
    return [...this.edited];
  }

  /** Everyone's valid awareness states, this user's included. */
  states() {
    return awarenessStates(this.awareness.getStates());
  }

  clientId(): number {
    return this.doc.clientID;
  }

  close(): void {
    this.connection.close();
    this.awareness.destroy();
    this.doc.destroy();
  }

  /**
   * The author of an update from the server: the user whose Yjs client wrote what it inserts (as
   * their awareness says), else the one other person in the session (a deletion carries no client).
   */
  private authorOf(tr: Y.Transaction): string {
    const states = this.awareness.getStates();
    for (const [client, clock] of tr.afterState) {
      if ((tr.beforeState.get(client) ?? 0) >= clock) continue;
      const id: unknown = (states.get(client) as { user?: { id?: unknown } } | undefined)?.user?.id;
      if (typeof id === "string") return id;
    }
    const others = new Set(this.participants.map((p) => p.user_id).filter((id) => id !== this.you?.user_id));
    return others.size === 1 ? [...others][0]! : "";
  }

  private receive(message: LiveServerMessage): void {
    if (message.type === "hello") {
      this.role = message.role;
      this.you = message.you;
      this.participants = message.participants;
      this.awareness.setLocalState(awarenessOf(message.you, message.role, this.file));
    } else if (message.type === "presence") this.participants = message.participants;
    this.options.onMessage(message);
  }
}
