// Text that came from an input (a results JSON, a path, a command line) and is about to be shown on a
// terminal, written into a line-oriented file (a fio .ini, a shell script) or into a spreadsheet cell.
// Control characters there are not text but instructions: a newline starts a new fio job or shell
// command, ESC starts a terminal sequence (OSC 52 sets the clipboard, CSI 2K erases the line), CR
// overwrites what was printed, bidirectional overrides reorder what the reader sees. Each is shown as a
// visible escape instead, so the text still says what it was and can no longer act.

/** C0 controls except tab, DEL, C1 controls, the Unicode line/paragraph separators and the bidi controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\u001b': '\\e' };

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `s` with every control character shown as an escape (`\n`, `\e`, `\x07`, `\u202e`): one inert line. */
export function inert(s: string): string {
  return s.replace(CONTROL, escapeOne);
}

const ANY_CONTROL = new RegExp(CONTROL.source, 'u');

/** Whether `s` holds a character `inert` would escape. */
export function hasControl(s: string): boolean {
  return ANY_CONTROL.test(s);
}

/** Leading characters that make a spreadsheet read a cell as a formula (or, for DDE, a command). */
const FORMULA_LEAD = /^[=+\-@\t\r|]/u;

/**
 * A text cell for a CSV a spreadsheet will open: a cell starting like a formula (`=HYPERLINK(…)`,
 * `=cmd|…`, `+`, `-`, `@`) gets a leading apostrophe so it is shown, not evaluated, and control
 * characters are escaped. Numbers are not text cells and never pass through here.
 */
export function inertCell(s: string): string {
  const shown = inert(s);
  return FORMULA_LEAD.test(s) ? `'${shown}` : shown;
}
