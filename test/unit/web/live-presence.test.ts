import { describe, expect, it } from "vitest";
import type { LiveParticipant } from "../../../protocol/socket-messages";
import { withSaved } from "../../../web/src/live/live-files";
import { awarenessOf, awarenessStates, candidateFile, colorFor, filesByUser, presenceText } from "../../../web/src/live/presence";

const cy: LiveParticipant = { user_id: "u-cy", name: "cy@example.test", role: "candidate" };
const ada: LiveParticipant = { user_id: "u-ada", name: "Ada", role: "staff" };
const bo: LiveParticipant = { user_id: "u-bo", name: "Bo", role: "staff" };

describe("live presence in words", () => {
  it("names the others by role and name, with the file one of them shows; no one else: nothing", () => {
    expect(presenceText([cy], "u-cy")).toBe("");
    expect(presenceText([cy, ada], "u-cy")).toBe("Interviewer Ada is here.");
    expect(presenceText([cy, ada], "u-cy", new Map([["u-ada", "src/slugify.js"]]))).toBe("Interviewer Ada is here, in src/slugify.js.");
    expect(presenceText([ada, cy], "u-ada", new Map([["u-cy", null]]))).toBe("Candidate cy@example.test is here.");
  });

  it("lists several, each with their file, and names a user in two tabs once", () => {
    const files = new Map([
      ["u-ada", "a.js"],
      ["u-cy", "b.js"],
    ]);
    expect(presenceText([bo, ada, ada, cy], "u-bo", files)).toBe("Interviewer Ada (in a.js) and candidate cy@example.test (in b.js) are here.");
    expect(presenceText([cy, ada, bo], "u-cy")).toBe("Interviewer Ada and interviewer Bo are here.");
  });
});

describe("live awareness states", () => {
  it("this user's state names them with a color of their own, the same on every screen", () => {
    const state = awarenessOf({ user_id: "u-ada", name: "Ada" }, "staff", "a.js");
    expect(state).toEqual({ user: { id: "u-ada", name: "Ada", role: "staff", color: colorFor("u-ada"), colorLight: `${colorFor("u-ada")}33` }, file: "a.js" });
    expect(colorFor("u-ada")).toMatch(/^#[0-9a-f]{6}$/);
    expect(new Set(["u-1", "u-2", "u-3", "u-4", "u-5", "u-6", "u-7"].map(colorFor)).size).toBeGreaterThan(1);
  });

  it("reads valid states only, and finds the file the candidate shows (staff follow it)", () => {
    const states = awarenessStates(
      new Map<number, unknown>([
        [1, awarenessOf({ user_id: "u-ada", name: "Ada" }, "staff", "a.js")],
        [2, {}],
        [3, { cursor: { anchor: 1, head: 2 } }],
        [4, awarenessOf({ user_id: "u-cy", name: "Cy" }, "candidate", "src/slugify.js")],
      ]),
    );
    expect(states.map((s) => s.user.id)).toEqual(["u-ada", "u-cy"]);
    expect(candidateFile(states)).toBe("src/slugify.js");
    expect(filesByUser(states)).toEqual(new Map([["u-ada", "a.js"], ["u-cy", "src/slugify.js"]]));
    expect(candidateFile(states.slice(0, 1))).toBeNull();
  });
});

describe("the staff's file tree in a live session", () => {
  it("marks saved files changed and adds the ones the candidate created, in path order", () => {
    const listed = [
      { path: "src/a.js", origin: "snapshot" as const, changed: false, deleted: false },
      { path: "z.md", origin: "snapshot" as const, changed: false, deleted: false },
    ];
    expect(withSaved(listed, ["src/a.js", "notes.txt"])).toEqual([
      { path: "notes.txt", origin: "added", changed: true, deleted: false },
      { path: "src/a.js", origin: "snapshot", changed: true, deleted: false },
      { path: "z.md", origin: "snapshot", changed: false, deleted: false },
    ]);
    expect(listed[0]!.changed).toBe(false);
  });
});
