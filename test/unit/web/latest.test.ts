import { describe, expect, it } from "vitest";
import { Latest } from "../../../web/src/lib/latest";

describe("Latest (only the newest request's answer lands)", () => {
  it("an older request that answers after a newer one was asked is dropped", () => {
    const latest = new Latest();
    const first = latest.next();
    latest.cancel(); // the effect's clean-up when the filters change
    const second = latest.next();
    expect(first()).toBe(false);
    expect(second()).toBe(true);
  });

  it("a newer request alone makes an older one stale, with no clean-up between", () => {
    const latest = new Latest();
    const first = latest.next();
    const second = latest.next();
    expect([first(), second()]).toEqual([false, true]);
  });

  it("nothing lands once cancelled (the page has gone)", () => {
    const latest = new Latest();
    const pending = latest.next();
    latest.cancel();
    expect(pending()).toBe(false);
  });
});
