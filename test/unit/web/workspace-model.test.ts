import { describe, expect, it } from "vitest";
import { formatClock, minutesLeft, spokenTimeLeft } from "../../../web/src/candidate/countdown";
import { ancestors, buildTree, pathProblem, treeKey, visibleRows } from "../../../web/src/candidate/file-tree-model";

const files = ["src/util/b.js", "README.md", "src/a.js", "test/a.test.js", "src/util/a.js"].map((path) => ({ path }));

describe("the file tree", () => {
  it("puts folders before files, each sorted by name", () => {
    const tree = buildTree(files);
    expect(tree.map((n) => n.id)).toEqual(["src/", "test/", "README.md"]);
    expect(tree[0]!.children.map((n) => n.id)).toEqual(["src/util/", "src/a.js"]);
    expect(tree[0]!.children[0]!.children.map((n) => n.name)).toEqual(["a.js", "b.js"]);
  });

  it("shows the rows of open folders with depth, parent and position", () => {
    const rows = visibleRows(buildTree(files), new Set(["src/"]));
    expect(rows.map((r) => [r.node.id, r.depth, r.parent, r.position, r.siblings])).toEqual([
      ["src/", 1, null, 1, 3],
      ["src/util/", 2, "src/", 1, 2],
      ["src/a.js", 2, "src/", 2, 2],
      ["test/", 1, null, 2, 3],
      ["README.md", 1, null, 3, 3],
    ]);
  });

  it("moves, opens and closes with the keys of the tree view pattern", () => {
    const tree = buildTree(files);
    const expanded = new Set(["src/"]);
    const rows = visibleRows(tree, expanded);
    expect(treeKey(rows, "src/", "ArrowDown", expanded)).toEqual({ focus: "src/util/" });
    expect(treeKey(rows, "src/util/", "ArrowUp", expanded)).toEqual({ focus: "src/" });
    expect(treeKey(rows, "src/util/", "ArrowRight", expanded)).toEqual({ expand: "src/util/" });
    expect(treeKey(rows, "src/", "ArrowRight", expanded)).toEqual({ focus: "src/util/" });
    expect(treeKey(rows, "src/", "ArrowLeft", expanded)).toEqual({ collapse: "src/" });
    expect(treeKey(rows, "src/a.js", "ArrowLeft", expanded)).toEqual({ focus: "src/" });
    expect(treeKey(rows, "src/a.js", "Enter", expanded)).toEqual({ open: "src/a.js" });
    expect(treeKey(rows, "test/", " ", expanded)).toEqual({ expand: "test/" });
    expect(treeKey(rows, "src/a.js", "End", expanded)).toEqual({ focus: "README.md" });
    expect(treeKey(rows, "README.md", "Home", expanded)).toEqual({ focus: "src/" });
    expect(treeKey(rows, "README.md", "ArrowDown", expanded)).toBeNull();
  });

  it("checks a new file's path by the overlay's rules", () => {
    expect(pathProblem("src/new.js")).toBeNull();
    for (const bad of ["", "/src/a.js", "src/", "src\\a.js", "src//a.js", "src/../a.js", "./a.js", ".git/config", "a/.GIT/x", "a\u0007b"]) {
      expect(pathProblem(bad), bad).not.toBeNull();
    }
  });

  it("names the folders around a path", () => {
    expect(ancestors("src/util/a.js")).toEqual(["src/", "src/util/"]);
    expect(ancestors("README.md")).toEqual([]);
  });
});

describe("the countdown", () => {
  it("shows a clock", () => {
    expect(formatClock(3_909_000)).toBe("1:05:09");
    expect(formatClock(249_000)).toBe("4:09");
    expect(formatClock(-5)).toBe("0:00");
  });

  it("changes its words only at minute boundaries", () => {
    expect(minutesLeft(600_000)).toBe(10);
    expect(minutesLeft(540_001)).toBe(10);
    expect(spokenTimeLeft(540_001)).toBe("10 minutes left.");
    expect(spokenTimeLeft(59_000)).toBe("Less than a minute left.");
    expect(spokenTimeLeft(5_400_000)).toBe("1 hour 30 minutes left.");
    expect(spokenTimeLeft(7_200_000)).toBe("2 hours left.");
    expect(spokenTimeLeft(0)).toBe("Time is up.");
  });
});
