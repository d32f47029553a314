// Who is in a live session, in words ("Interviewer Ada is here, in src/slugify.js."), the color
// each person's cursor has, and which file each has open, from the session's presence messages
// and the awareness states (protocol/socket-messages.ts). Pure, so it is tested on its own.
import { liveAwarenessSchema, type LiveAwareness, type LiveParticipant } from "../../../protocol/socket-messages";

/** Cursor colors, each with at least 4.5:1 contrast against the white text of its name tag. */
const COLORS = ["#0b5cad", "#a3127f", "#0b6a41", "#8a4b00", "#5b3cc4", "#b00020"];

/** A person's cursor color: the same for them on every screen, from their user id. */
export function colorFor(userId: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) h = Math.imul(h ^ userId.charCodeAt(i), 0x01000193);
  return COLORS[(h >>> 0) % COLORS.length]!;
}

/** This user's awareness state: who they are (y-codemirror.next draws `name` and `color`), and the file they show. */
export function awarenessOf(you: { user_id: string; name: string }, role: LiveParticipant["role"], file: string | null): LiveAwareness & { user: { colorLight: string } } {
  const color = colorFor(you.user_id);
  return { user: { id: you.user_id, name: you.name, role, color, colorLight: `${color}33` }, file };
}

/** The valid awareness states by client, others' and this user's alike; a state that does not parse is left out. */
export function awarenessStates(states: ReadonlyMap<number, unknown>): LiveAwareness[] {
  const out: LiveAwareness[] = [];
  for (const state of states.values()) {
    const parsed = liveAwarenessSchema.safeParse(state);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

/** The file each user shows, by user id (a user in two tabs: the file of the last state). */
export function filesByUser(states: readonly LiveAwareness[]): Map<string, string | null> {
  return new Map(states.map((s) => [s.user.id, s.file]));
}

/** The file the candidate shows: the one staff follow. Null when they show none or are not there. */
export function candidateFile(states: readonly LiveAwareness[]): string | null {
  return states.find((s) => s.user.role === "candidate" && s.file !== null)?.file ?? null;
}

function listed(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/**
 * The others in the session in a sentence, each by role and name and with the file they show:
 * "Interviewer Ada is here, in src/slugify.js." Empty when no one else is. A user in two tabs
 * is named once.
 */
export function presenceText(participants: readonly LiveParticipant[], youId: string, files: ReadonlyMap<string, string | null> = new Map()): string {
  const others = new Map<string, LiveParticipant>();
  for (const p of participants) if (p.user_id !== youId) others.set(p.user_id, p);
  if (others.size === 0) return "";
  const words = [...others.values()].map((p, i) => {
    const role = p.role === "staff" ? "interviewer" : "candidate";
    const file = files.get(p.user_id);
    const who = `${i === 0 ? role[0]!.toUpperCase() + role.slice(1) : role} ${p.name}`;
    return others.size > 1 && file ? `${who} (in ${file})` : who;
  });
  const only = others.size === 1 ? files.get([...others.keys()][0]!) : null;
  return `${listed(words)} ${others.size === 1 ? "is" : "are"} here${only ? `, in ${only}` : ""}.`;
}
