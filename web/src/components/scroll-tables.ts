// On a phone a wide table scrolls sideways inside its own box (styles.css). A box that scrolls
// must be reachable by keyboard to be scrolled, so while a table overflows it is a tab stop
// (tabindex 0), and stops being one when it fits again: wider screens keep their tab order.
const MARK = "data-scroll-stop";

function update(table: HTMLTableElement): void {
  const style = getComputedStyle(table);
  const scrolls = (style.overflowX === "auto" || style.overflowX === "scroll") && table.scrollWidth > table.clientWidth + 1;
  if (scrolls && !table.hasAttribute("tabindex")) {
    table.setAttribute("tabindex", "0");
    table.setAttribute(MARK, "");
  } else if (!scrolls && table.hasAttribute(MARK)) {
    table.removeAttribute("tabindex");
    table.removeAttribute(MARK);
  }
}

/** Watches the tables under `root` from now on; answers the function that stops watching. */
export function keepScrollingTablesFocusable(root: HTMLElement): () => void {
  const sizes = new ResizeObserver((entries) => {
    for (const entry of entries) update(entry.target as HTMLTableElement);
  });
  // Cheap on the editor's many small insertions: most nodes hold no table.
  const tablesIn = (node: Node): HTMLTableElement[] =>
    node instanceof HTMLTableElement ? [node] : node instanceof Element ? Array.from(node.getElementsByTagName("table")) : [];
  const added = new MutationObserver((records) => {
    for (const record of records) {
      record.removedNodes.forEach((node) => tablesIn(node).forEach((table) => sizes.unobserve(table)));
      record.addedNodes.forEach((node) => tablesIn(node).forEach((table) => sizes.observe(table)));
    }
  });
  tablesIn(root).forEach((table) => sizes.observe(table));
  added.observe(root, { childList: true, subtree: true });
  return () => {
    added.disconnect();
    sizes.disconnect();
  };
}
