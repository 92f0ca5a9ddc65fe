// A top-level JSON array read element by element as its bytes arrive, so a file larger than V8's
// string limit can be read and a reader may stop early; and, after JSON.parse failed, the place of the
// syntax error (V8's messages give none). Generic: a source (ShareGPT today) supplies the bytes and
// turns a problem and its place into its own typed error.

export interface JsonPlace {
  /** 1-based. */
  readonly line: number;
  /** 1-based, in characters. */
  readonly column: number;
}

/** Where the bytes come from, and how a problem (at a place, or about the whole file) becomes an error. */
export interface JsonArraySource {
  /** The next bytes (may reuse one buffer: consumed before the next call); empty at the end. */
  read(): Buffer;
  fail(problem: string, at?: JsonPlace): Error;
  /** An element longer than this many bytes is refused (it would be held whole in memory). */
  readonly maxElementBytes?: number;
  /** Said after that refusal, in brackets: why the limit is no loss (e.g. no real record is that large). */
  readonly maxElementNote?: string;
}

export interface RawElement extends JsonPlace {
  /** 0-based position in the array; line/column = where the element starts. */
  readonly index: number;
  readonly text: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NEWLINE = 0x0a;
const UTF8_BOM: readonly number[] = [0xef, 0xbb, 0xbf];

function isWs(b: number): boolean {
  return b === 0x20 || b === NEWLINE || b === 0x0d || b === 0x09;
}

type ArrayPhase = 'start' | 'first' | 'next' | 'element' | 'after' | 'end';

/** The place of the next byte, and the bracket depth and string state of the element being read. */
class ByteScanner {
  line = 1;
  column = 1;
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Move past one byte (a UTF-8 continuation byte does not start a character). */
  step(b: number): void {
    if (b === NEWLINE) {
      this.line++;
      this.column = 1;
    } else if ((b & 0xc0) !== 0x80) this.column++;
  }

  startElement(): void {
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
  }

  /**
   * Read an element's bytes from `from`: the index just past its last byte, or -1 when it goes on
   * past `buf`. A bare value (number, literal) ends before the separator that follows it.
   */
  scanElement(buf: Buffer, from: number): number {
    let { depth, inString, escaped } = this;
    let end = -1;
    let i = from;
    for (; i < buf.length; i++) {
      const b = buf[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) {
          inString = false;
          if (depth === 0) end = i + 1;
        }
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (depth === 0) end = i;
        else if (--depth === 0) end = i + 1;
      } else if (depth === 0 && (b === COMMA || isWs(b))) end = i;
      if (end === i) break;
      this.step(b);
      if (end >= 0) break;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return end;
  }
}

/**
 * The top-level array's elements as text, in order, as the bytes arrive. Splitting needs only bracket
 * depth and string state (UTF-8 continuation bytes never look like ASCII); each element is checked
 * later by JSON.parse (parseElement). Problems outside elements are reported here with their place.
 * A consumer that stops early leaves the rest of the input unread.
 */
export function* arrayElements(source: JsonArraySource): Generator<RawElement, void, undefined> {
  const pos = new ByteScanner();
  let phase: ArrayPhase = 'start';
  let pieces: Buffer[] = [];
  let at: JsonPlace = { line: 1, column: 1 };
  let index = 0;
  let bomBytes = 0;
  let pieceBytes = 0;
  const maxElementBytes = source.maxElementBytes ?? Infinity;
  const note = source.maxElementNote !== undefined ? ` (${source.maxElementNote})` : '';
  const invalid = (problem: string): Error => source.fail(problem, { line: pos.line, column: pos.column });
  for (let buf = source.read(); buf.length > 0; buf = source.read()) {
    let i = 0;
    while (i < buf.length) {
      if (phase === 'element') {
        const end = pos.scanElement(buf, i);
        pieceBytes += (end < 0 ? buf.length : end) - i;
        if (pieceBytes > maxElementBytes)
          throw source.fail(
            `record ${index + 1} (which starts at line ${at.line}, column ${at.column}) is larger than ${maxElementBytes} bytes${note}`,
          );
        if (end < 0) {
          pieces.push(Buffer.from(buf.subarray(i))); // a copy: the buffer is reused
          break;
        }
        pieces.push(buf.subarray(i, end));
        pieceBytes = 0;
        const text = (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces)).toString('utf8');
        pieces = [];
        phase = 'after';
        i = end;
        yield { index: index++, text, ...at };
        continue;
      }
      const b = buf[i];
      if (phase === 'start' && pos.line === 1 && pos.column === 1 && b === UTF8_BOM[bomBytes]) {
        bomBytes++; // a UTF-8 byte order mark at the very start is skipped
        i++;
        continue;
      }
      if (!isWs(b)) {
        if (phase === 'start') {
          if (b !== OPEN_BRACKET) throw topLevelProblem(b, source, invalid);
          phase = 'first';
        } else if (phase === 'first' || phase === 'next') {
          if (b === CLOSE_BRACKET && phase === 'first') phase = 'end';
          else if (b === CLOSE_BRACKET || b === COMMA)
            throw invalid(`expected a record, found '${String.fromCharCode(b)}'${b === CLOSE_BRACKET ? ' (trailing comma?)' : ''}`);
          else {
            phase = 'element';
            at = { line: pos.line, column: pos.column };
            pos.startElement();
            continue; // the element's first byte is read in the element phase
          }
        } else if (phase === 'after') {
          if (b === COMMA) phase = 'next';
          else if (b === CLOSE_BRACKET) phase = 'end';
          else throw invalid(`expected ',' or ']' after record ${index}`);
        } else {
          throw invalid("unexpected text after the closing ']' of the array");
        }
      }
      pos.step(b);
      i++;
    }
  }
  if (phase === 'start') throw source.fail('the file is empty');
  if (phase === 'element')
    throw invalid(
      `unexpected end of file inside record ${index + 1} (which starts at line ${at.line}, column ${at.column}); is the file truncated?`,
    );
  if (phase !== 'end') throw invalid("unexpected end of file: the array is not closed with ']'; is the file truncated?");
}

function topLevelProblem(b: number, source: JsonArraySource, invalid: (problem: string) => Error): Error {
  const ch = String.fromCharCode(b);
  const kind =
    b === OPEN_BRACE
      ? 'an object'
      : b === QUOTE
        ? 'a string'
        : ch === '-' || (ch >= '0' && ch <= '9')
          ? 'a number'
          : 'tfn'.includes(ch)
            ? 'a literal'
            : undefined;
  if (kind === undefined)
    return invalid(b < 0x20 || b >= 0x7f ? `unexpected byte 0x${b.toString(16).padStart(2, '0')}` : `unexpected character '${ch}'`);
  const jsonLines = b === OPEN_BRACE ? ' (JSON Lines, one record per line, is not supported)' : '';
  return source.fail(`the top level is ${kind}, not an array${jsonLines}`);
}

/** JSON.parse of one element; a syntax error is reported at its line and column in the file. */
export function parseElement(el: RawElement, source: Pick<JsonArraySource, 'fail'>): unknown {
  try {
    return JSON.parse(el.text);
  } catch {
    // V8's messages quote the source text and give no line; find the place ourselves.
    const found = findJsonSyntaxError(el.text) ?? { offset: el.text.length, problem: 'not valid JSON' };
    throw source.fail(`${found.problem} (in record ${el.index + 1})`, placeAfter(el.text, found.offset, el));
  }
}

/** The place of text[offset] when text starts at `from`. */
function placeAfter(text: string, offset: number, from: JsonPlace): JsonPlace {
  let { line, column } = from;
  for (let k = 0; k < offset && k < text.length; k++) {
    const u = text.charCodeAt(k);
    if (u === NEWLINE) {
      line++;
      column = 1;
    } else if (u < 0xdc00 || u > 0xdfff) column++; // a low surrogate ends a character already counted
  }
  return { line, column };
}

// ---- locating a JSON syntax error (only after JSON.parse failed) ------------------------------------

export interface JsonSyntaxProblem {
  /** UTF-16 offset of the offending character (text.length at end of input). */
  readonly offset: number;
  readonly problem: string;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;
const LITERALS = ['true', 'false', 'null'] as const;

/** The first syntax error in `text` (RFC 8259), or undefined when it is valid JSON. Iterative. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  let i = 0;
  const closers: string[] = [];
  const fail = (problem: string): JsonSyntaxProblem => ({ offset: i, problem });
  const here = (): string => (i >= text.length ? 'unexpected end of input' : `unexpected character ${JSON.stringify(text.charAt(i))}`);
  const skipWs = (): void => {
    while (i < text.length && isWs(text.charCodeAt(i))) i++;
  };
  const scanString = (): JsonSyntaxProblem | undefined => {
    for (i++; ;) {
      if (i >= text.length) return fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail('unescaped control character in a string');
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      const e = text.charAt(i + 1);
      HEX4.lastIndex = i + 2;
      if (e === 'u' ? !HEX4.test(text) : !'"\\/bfnrt'.includes(e) || e === '') return fail('invalid escape sequence in a string');
      i += e === 'u' ? 6 : 2;
    }
  };
  const scanKey = (): JsonSyntaxProblem | undefined => {
    skipWs();
    if (text.charCodeAt(i) !== QUOTE) return fail(i >= text.length ? here() : `expected a string key, ${here()}`);
    const p = scanString();
    if (p !== undefined) return p;
    skipWs();
    if (text.charAt(i) !== ':') return fail(`expected ':' after a key, ${here()}`);
    i++;
    return undefined;
  };
  let expectValue = true;
  for (;;) {
    skipWs();
    if (expectValue) {
      const c = text.charAt(i);
      let p: JsonSyntaxProblem | undefined;
      if (c === '{' || c === '[') {
        i++;
        skipWs();
        if (text.charAt(i) === (c === '{' ? '}' : ']')) i++;
        else {
          closers.push(c === '{' ? '}' : ']');
          p = c === '{' ? scanKey() : undefined;
          if (p !== undefined) return p;
          continue;
        }
      } else if (c === '"') p = scanString();
      else if (c === '-' || (c >= '0' && c <= '9')) {
        NUMBER.lastIndex = i;
        const m = NUMBER.exec(text);
        if (m === null) return fail('invalid number');
        i += m[0].length;
      } else {
        const lit = LITERALS.find((w) => text.startsWith(w, i));
        if (lit === undefined) return fail(here());
        i += lit.length;
      }
      if (p !== undefined) return p;
      expectValue = false;
      continue;
    }
    const closer = closers.at(-1);
    if (closer === undefined) return i < text.length ? fail('unexpected text after the value') : undefined;
    const c = text.charAt(i);
    if (c === closer) {
      i++;
      closers.pop();
    } else if (c === ',') {
      i++;
      if (closer === '}') {
        const p = scanKey();
        if (p !== undefined) return p;
      }
      expectValue = true;
    } else return fail(`expected ',' or '${closer}', ${here()}`);
  }
}
