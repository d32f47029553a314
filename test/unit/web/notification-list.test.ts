import { describe, expect, it } from "vitest";
import { markRead } from "../../../web/src/components/notification-list";

const AT = "2026-11-20T10:00:00.000Z";

describe("markRead", () => {
  it("marks the opened notification read and leaves the others as they are", () => {
    const items = [
      { id: 3, read_at: null, type: "run.finished" },
      { id: 2, read_at: null, type: "score_report.ready" },
      { id: 1, read_at: "2026-11-19T09:00:00.000Z", type: "notification.test" },
    ];
    const marked = markRead(items, (n) => n.id === 2, AT);
    expect(marked.map((n) => n.read_at)).toEqual([null, AT, "2026-11-19T09:00:00.000Z"]);
    expect(marked[1]).toEqual({ id: 2, read_at: AT, type: "score_report.ready" });
    expect(items[1]!.read_at).toBeNull();
  });

  it("keeps the time of one read before, when marking every one up to an id", () => {
    const items = [
      { id: 2, read_at: null },
      { id: 1, read_at: "2026-11-19T09:00:00.000Z" },
    ];
    expect(markRead(items, (n) => n.id <= 2, AT)).toEqual([
      { id: 2, read_at: AT },
      { id: 1, read_at: "2026-11-19T09:00:00.000Z" },
    ]);
  });
});
