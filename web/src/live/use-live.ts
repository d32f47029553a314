// A page's live session as Preact state: the session once its module has loaded (Yjs is
// downloaded only when a task has live sessions on), the socket's state, who is there in words,
// and the file the candidate shows. The candidate's workspace and the staff's live view both
// use it. Renders again only when what it says changes, not at every cursor move.
import { useEffect, useRef, useState } from "preact/hooks";
import type { LiveParticipant, LiveServerMessage } from "../../../protocol/socket-messages";
import type { LiveSession, LiveState } from "./live-session";
import { candidateFile, filesByUser, presenceText } from "./presence";

export interface LiveView {
  /** The session, from when its module has loaded; null while it loads, and when live is off. */
  session: LiveSession | null;
  /** "off": the page has no live session. */
  state: LiveState | "loading" | "off";
  /** Why the session was lost, in the API's words. */
  detail?: string;
  /** The others in a sentence; empty when no one else is there. */
  presence: string;
  participants: LiveParticipant[];
  role: LiveParticipant["role"] | null;
  /** The file the candidate shows (staff follow it). */
  followed: string | null;
  /** When the server last saved the shared files. */
  savedAt: string | null;
  readOnly: boolean;
}

const INITIAL: LiveView = { session: null, state: "loading", presence: "", participants: [], role: null, followed: null, savedAt: null, readOnly: false };
const OFF: LiveView = { ...INITIAL, state: "off" };

export function useLiveSession(attemptId: string, enabled: boolean, onMessage?: (message: LiveServerMessage) => void): LiveView {
  const [view, setView] = useState<LiveView>(INITIAL);
  const listener = useRef(onMessage);
  listener.current = onMessage;

  useEffect(() => {
    if (!enabled) return;
    let session: LiveSession | null = null;
    let alive = true;
    let you = "";
    let participants: LiveParticipant[] = [];
    const update = (change: Partial<LiveView>) => alive && setView((v) => (Object.entries(change).every(([k, value]) => v[k as keyof LiveView] === value) ? v : { ...v, ...change }));
    const described = () => {
      if (!session) return;
      const states = session.states();
      update({ presence: presenceText(participants, you, filesByUser(states)), followed: candidateFile(states) });
    };
    void import("./live-session").then(({ LiveSession }) => {
      if (!alive) return;
      session = new LiveSession({
        attemptId,
        onState: (state, detail) => update(detail === undefined ? { state } : { state, detail }),
        onAwareness: described,
        onMessage: (message) => {
          if (message.type === "hello") {
            you = message.you.user_id;
            participants = message.participants;
            update({ role: message.role, participants, readOnly: message.read_only });
            described();
          } else if (message.type === "presence") {
            participants = message.participants;
            update({ participants });
            described();
          } else if (message.type === "saved") update({ savedAt: message.at });
          else if (message.type === "read_only") update({ readOnly: true });
          listener.current?.(message);
        },
      });
      update({ session });
      session.start();
    });
    return () => {
      alive = false;
      session?.close();
      setView(INITIAL);
    };
  }, [attemptId, enabled]);

  return enabled ? view : OFF;
}

const STATE_WORDS: Record<LiveView["state"], string> = {
  off: "",
  loading: "Joining the live session…",
  connecting: "Joining the live session…",
  open: "Live",
  reconnecting: "Live session: connection lost, reconnecting…",
  lost: "Not connected to the live session",
  closed: "Left the live session",
};

/** The socket's state in words, with the reason the session was lost. */
export function liveStateWords(view: Pick<LiveView, "state" | "detail">): string {
  const words = STATE_WORDS[view.state];
  return view.state === "lost" && view.detail ? `${words}: ${view.detail}` : words;
}
