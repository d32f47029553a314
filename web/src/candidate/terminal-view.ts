// The terminal itself (xterm.js), loaded only when the candidate first runs a file: the editor
// is usable before this download. Its styles are in styles.css ("candidate" section), since
// the build does not link CSS imported from a script.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";

export interface TerminalView {
  terminal: Terminal;
  fit: () => void;
  dispose: () => void;
}

export function openTerminal(parent: HTMLElement): TerminalView {
  const terminal = new Terminal({
    convertEol: true,
    cursorBlink: true,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    fontSize: 13,
    scrollback: 5000,
    // A screen reader reads output as it comes, and the typed line as it is edited.
    screenReaderMode: true,
    theme: { background: "#111111", foreground: "#e8e8e8", cursor: "#e8e8e8", red: "#ff8080", brightRed: "#ff9999", cyan: "#7fd4ff", yellow: "#ffd866" },
  });
  const fitAddon = new FitAddon();
  terminal.loadAddon(fitAddon);
  terminal.open(parent);
  const fit = () => {
    try {
      fitAddon.fit();
    } catch {
      // A hidden terminal has no size to fit to; the next resize fits it.
    }
  };
  fit();
  const observer = new ResizeObserver(fit);
  observer.observe(parent);
  return {
    terminal,
    fit,
    dispose: () => {
      observer.disconnect();
      terminal.dispose();
    },
  };
}
