// Line-mode input for the live execution's terminal, as a terminal's line discipline does it:
// the program gets a whole line on Enter, and until then the candidate can edit it (Backspace,
// Ctrl-U). Typed keys arrive as the terminal's data (xterm's onData), escape sequences included.

export interface LineInput {
  /** What to write to the terminal so the candidate sees what they typed. */
  echo: string;
  /** Whole lines for the program's stdin, each ending in "\n". */
  send: string[];
  /** Ctrl-D on an empty line: close the program's stdin. */
  eof: boolean;
  /** Ctrl-C: stop the program. */
  interrupt: boolean;
}

/** Whether a code point takes two columns in a terminal (CJK, Hangul, full-width forms, most emoji). */
function wide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}

function erase(char: string): string {
  return wide(char.codePointAt(0) ?? 0) ? "\b\b  \b\b" : "\b \b";
}

export class LineEditor {
  private chars: string[] = [];
  private afterCr = false;

  /** The line typed so far. */
  get line(): string {
    return this.chars.join("");
  }

  input(data: string): LineInput {
    const result: LineInput = { echo: "", send: [], eof: false, interrupt: false };
    const chars = Array.from(data);
    for (let i = 0; i < chars.length; i++) {
      const char = chars[i]!;
      const wasCr = this.afterCr;
      this.afterCr = char === "\r";
      if (char === "\n" && wasCr) continue;
      if (char === "\r" || char === "\n") {
        result.send.push(`${this.line}\n`);
        result.echo += "\r\n";
        this.chars = [];
      } else if (char === "\x7f" || char === "\b") {
        const last = this.chars.pop();
        if (last !== undefined) result.echo += erase(last);
      } else if (char === "\x15") {
        result.echo += this.chars.map(erase).reverse().join("");
        this.chars = [];
      } else if (char === "\x03") {
        result.echo += "^C\r\n";
        result.interrupt = true;
        this.chars = [];
      } else if (char === "\x04") {
        if (this.chars.length === 0) result.eof = true;
        else {
          result.send.push(this.line);
          this.chars = [];
        }
      } else if (char === "\x1b") {
        i = skipEscape(chars, i);
      } else if (char === "\t" || char >= " ") {
        this.chars.push(char);
        result.echo += char;
      }
    }
    return result;
  }

  reset(): void {
    this.chars = [];
    this.afterCr = false;
  }
}

/** The index of the last character of the escape sequence starting at `i` (arrows, function keys: not line editing). */
function skipEscape(chars: string[], i: number): number {
  const next = chars[i + 1];
  if (next === "[") {
    let j = i + 2;
    while (j < chars.length && !/[@-~]/.test(chars[j]!)) j++;
    return Math.min(j, chars.length - 1);
  }
  if (next === "O") return Math.min(i + 2, chars.length - 1);
  return next === undefined ? i : i + 1;
}
