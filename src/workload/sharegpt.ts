// ShareGPT replay (docs/reference-compat.md#rc-31): load conversations from a ShareGPT-style JSON file as token counts, and
// turn them into a paced, reproducible request timeline. Kept from the reference: stride-2 pairing of
// (human, assistant) messages with misaligned pairs skipped, context = that human message only,
// caps 16,384 / 2,048 tokens, a fresh shuffle per pass, pacing 1/rate, --replay-cycles. On purpose
// different:
// - the file is streamed record by record, so its size is not bounded by V8's string limit
//   (buffer.constants.MAX_STRING_LENGTH, 536,870,888 on Node 20; the usual ShareGPT_V3 split is
//   reported at ~650 MB), reading stops once maxConversations conversations are loaded, and message
//   texts are dropped as soon as they are counted;
// - maxConversations counts records that yield at least one turn (the reference's data[:N] counted
//   empty records too);
// - more message shapes: from/value or role/content, under conversations/conversation/messages, with
//   user/assistant/chatgpt/bing/bard accepted and system messages removed before pairing;
// - a bad file is a DatasetError naming the file, the problem and its place, not a silent fallback to
//   synthetic users; duplicate record ids are made unique so two records never share cache keys;
// - conversation ids carry the pass (`<id>_p<pass>`), see shareGptTimeline.
// Pure apart from reading the file: no timers; the shuffle uses the injected Rng.
import { closeSync, openSync, readSync } from 'node:fs';
import { checkInputFile } from '../util/input-file.js';
import type { Rng } from '../util/rng.js';
import type { TokenCounter } from './tokens.js';

/** The reference's hard-coded limits (docs/reference-compat.md#rc-31) and --max-conversations default. */
export const SHAREGPT_DEFAULTS = { maxConversations: 500, maxContextTokens: 16_384, maxGenerationTokens: 2_048 } as const;

const READABLE_FILE = 'Expected a readable ShareGPT JSON file (--dataset-path)';
const VALID_SHAPE =
  'A valid file is a JSON array of records such as {"id": "a1", "conversations": [{"from": "human", "value": "..."}, ' +
  '{"from": "gpt", "value": "..."}]} (also "conversation" or "messages", and "role"/"content" messages)';

export class DatasetError extends Error {
  readonly path: string;

  constructor(path: string, problem: string, hint: string = VALID_SHAPE) {
    super(`ShareGPT dataset '${path}': ${problem}. ${hint}`);
    this.name = 'DatasetError';
    this.path = path;
  }
}

export interface ShareGptTurn {
  readonly contextTokens: number;
  readonly generationTokens: number;
}

export interface ShareGptConversation {
  readonly id: string;
  readonly turns: readonly ShareGptTurn[];
}

export interface ShareGptLoadOptions {
  readonly maxConversations: number;
  readonly tokens: TokenCounter;
  readonly maxContextTokens: number;
  readonly maxGenerationTokens: number;
  /** Read size in bytes (default 4 MiB); small values exercise chunk boundaries in tests. */
  readonly chunkBytes?: number;
  /** Bytes of one record at most (default MAX_RECORD_BYTES); small values in tests. */
  readonly maxRecordBytes?: number;
}

/**
 * One record (conversation) larger than this is refused: it would be held whole in memory, and past
 * V8's string limit (~512 MiB) it cannot be parsed at all. Real ShareGPT records are below 1 MiB.
 */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export interface ShareGptStats {
  /** Records read from the file (reading stops once maxConversations conversations are loaded). */
  readonly records: number;
  readonly conversationsLoaded: number;
  readonly turns: number;
  /** Message pairs at (2k, 2k+1) that were not (human, assistant), in the records read. */
  readonly skippedPairs: number;
  /** Records read that gave no turn: not an object, no message list, or no aligned pair. */
  readonly skippedRecords: number;
}

export interface ShareGptDataset {
  readonly conversations: readonly ShareGptConversation[];
  readonly stats: ShareGptStats;
}

export function loadShareGpt(path: string, opts: ShareGptLoadOptions): ShareGptDataset {
  checkPositiveInt('maxConversations', opts.maxConversations);
  checkPositiveInt('maxContextTokens', opts.maxContextTokens);
  checkPositiveInt('maxGenerationTokens', opts.maxGenerationTokens);
  const chunkBytes = opts.chunkBytes ?? 4 * 1024 * 1024;
  checkPositiveInt('chunkBytes', chunkBytes);
  const conversations: ShareGptConversation[] = [];
  const ids = new Set<string>();
  let records = 0;
  let skippedPairs = 0;
  let turns = 0;
  const fd = openDataset(path);
  const buf = Buffer.allocUnsafe(chunkBytes);
  const source: JsonArraySource = {
    read: () => readChunk(path, fd, buf),
    maxElementBytes: opts.maxRecordBytes ?? MAX_RECORD_BYTES,
    fail: (problem, at) =>
      new DatasetError(path, at === undefined ? problem : `invalid JSON at line ${at.line}, column ${at.column}: ${problem}`),
  };
  try {
    for (const element of arrayElements(source)) {
      records++;
      const parsed = recordTurns(parseElement(element, source), opts);
      skippedPairs += parsed.skippedPairs;
      if (parsed.turns.length === 0) continue;
      const id = uniqueId(parsed.id ?? `conv_${element.index}`, ids);
      conversations.push({ id, turns: parsed.turns });
      turns += parsed.turns.length;
      if (conversations.length >= opts.maxConversations) break;
    }
  } finally {
    closeSync(fd);
  }
  if (conversations.length === 0) {
    const what =
      records === 0
        ? 'the array has no records'
        : `none of its ${records} records has a (human, assistant) message pair (${skippedPairs} misaligned pairs skipped)`;
    throw new DatasetError(path, `no usable conversation: ${what}`);
  }
  const stats = { records, conversationsLoaded: conversations.length, turns, skippedPairs, skippedRecords: records - conversations.length };
  return { conversations, stats };
}

function checkPositiveInt(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, got ${v}`);
}

function uniqueId(id: string, seen: Set<string>): string {
  let out = id;
  for (let k = 2; seen.has(out); k++) out = `${id}_dup${k}`;
  seen.add(out);
  return out;
}

// ---- records → turns ----------------------------------------------------------------------------

type Speaker = 'human' | 'assistant' | 'system' | 'other';

const SPEAKERS: ReadonlyMap<string, Speaker> = new Map<string, Speaker>([
  ['human', 'human'],
  ['user', 'human'],
  ['gpt', 'assistant'],
  ['chatgpt', 'assistant'],
  ['assistant', 'assistant'],
  ['bing', 'assistant'],
  ['bard', 'assistant'],
  ['system', 'system'],
]);

interface Message {
  readonly speaker: Speaker;
  readonly text: unknown;
}

interface RecordTurns {
  readonly id: string | undefined;
  readonly turns: ShareGptTurn[];
  readonly skippedPairs: number;
}

/** The record's turns. Texts are counted and let go; only the numbers are kept. */
function recordTurns(record: unknown, opts: ShareGptLoadOptions): RecordTurns {
  if (!isObject(record)) return { id: undefined, turns: [], skippedPairs: 0 };
  const id = typeof record.id === 'string' && record.id !== '' ? record.id : typeof record.id === 'number' ? String(record.id) : undefined;
  const list = [record.conversations, record.conversation, record.messages].find(Array.isArray);
  if (list === undefined) return { id, turns: [], skippedPairs: 0 };
  const messages = list.map(toMessage).filter((m) => m.speaker !== 'system');
  const turns: ShareGptTurn[] = [];
  let skippedPairs = 0;
  for (let i = 0; i + 1 < messages.length; i += 2) {
    const ask = messages[i];
    const reply = messages[i + 1];
    if (ask?.speaker !== 'human' || reply?.speaker !== 'assistant') {
      skippedPairs++;
      continue;
    }
    turns.push({
      contextTokens: clampTokens(opts.tokens.count(textOf(ask.text)), opts.maxContextTokens),
      generationTokens: clampTokens(opts.tokens.count(textOf(reply.text)), opts.maxGenerationTokens),
    });
  }
  return { id, turns, skippedPairs };
}

function toMessage(m: unknown): Message {
  if (!isObject(m)) return { speaker: 'other', text: '' };
  const who = typeof m.from === 'string' ? m.from : typeof m.role === 'string' ? m.role : '';
  return { speaker: SPEAKERS.get(who.toLowerCase()) ?? 'other', text: m.value ?? m.content };
}

/** A string, or the text parts of a content list ([{type: 'text', text}] or strings); else ''. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  return v.map((p) => (typeof p === 'string' ? p : isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function clampTokens(n: number, cap: number): number {
  return Math.min(cap, Math.max(1, n));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---- the file ----------------------------------------------------------------------------------

/** Opens the dataset after checking, without opening it, that it is a regular file (a FIFO would block the open). */
function openDataset(path: string): number {
  const checked = checkInputFile(path);
  if (!checked.ok) throw new DatasetError(path, checked.problem, READABLE_FILE);
  try {
    return openSync(path, 'r');
  } catch (e: unknown) {
    throw new DatasetError(path, fileProblem(e), READABLE_FILE);
  }
}

/** The next bytes of the file into `buf` (a view of it; empty at the end). */
function readChunk(path: string, fd: number, buf: Buffer): Buffer {
  try {
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, null));
  } catch (e: unknown) {
    throw new DatasetError(path, fileProblem(e), READABLE_FILE);
  }
}

function fileProblem(e: unknown): string {
  const code = isObject(e) && typeof e.code === 'string' ? e.code : 'unknown error';
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'not a regular file (a directory?)';
  return `cannot read the file (${code})`;
}

// ---- streaming a top-level JSON array (independent of the rest of this file) ----------------------

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
  const invalid = (problem: string): Error => source.fail(problem, { line: pos.line, column: pos.column });
  for (let buf = source.read(); buf.length > 0; buf = source.read()) {
    let i = 0;
    while (i < buf.length) {
      if (phase === 'element') {
        const end = pos.scanElement(buf, i);
        pieceBytes += (end < 0 ? buf.length : end) - i;
        if (pieceBytes > maxElementBytes)
          throw source.fail(
            `record ${index + 1} (which starts at line ${at.line}, column ${at.column}) is larger than ${maxElementBytes} bytes (no real conversation is that large)`,
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

// ---- the replay timeline ------------------------------------------------------------------------

export interface ShareGptTimelineOptions {
  /** Requests per second; 0 = as fast as possible (every request scheduled at 0). */
  readonly requestRate: number;
  /** Complete passes over the conversations; 0 = unlimited. */
  readonly replayCycles: number;
  /** Shuffles the conversation order of each pass. */
  readonly rng: Rng;
}

export interface ShareGptRequestPlan {
  /** k: 0-based position in issue order. */
  readonly index: number;
  /** `<id>_p<pass>`: unique per pass, so cache keys `<conversationId>_turn_<n>` are too. */
  readonly conversationId: string;
  /** The dataset's conversation id. */
  readonly sourceId: string;
  /** 1-based pass number. */
  readonly pass: number;
  /** 0-based position of the turn in its conversation. */
  readonly turnIndex: number;
  /** turnIndex + 1, the turn number used in keys. */
  readonly turn: number;
  readonly contextTokens: number;
  readonly generationTokens: number;
  /** k × 1000 / requestRate, or 0 when the rate is 0. */
  readonly scheduledAtMs: number;
}

/**
 * The replay's requests in issue order, lazily: each pass visits every conversation once in a freshly
 * shuffled order and issues all its turns in sequence. Conversation ids are made unique per pass: the
 * reference reused `<conv>_turn_<n>` keys, so from the second pass on its "prefill writes" landed on
 * entries that might still be cached and its decode reads re-read a fixed working set, which makes a
 * long replay measure the cache rather than the same load as the first pass. Within a pass, the
 * earlier turns of a conversation are still its own (multi-turn reloads see them).
 */
export function shareGptTimeline(
  conversations: readonly ShareGptConversation[],
  opts: ShareGptTimelineOptions,
): Generator<ShareGptRequestPlan, void, undefined> {
  const { requestRate, replayCycles } = opts;
  if (!Number.isFinite(requestRate) || requestRate < 0) throw new RangeError(`requestRate must be a finite number ≥ 0, got ${requestRate}`);
  if (!Number.isInteger(replayCycles) || replayCycles < 0) throw new RangeError(`replayCycles must be an integer ≥ 0, got ${replayCycles}`);
  return replay(conversations, opts);
}

function* replay(
  conversations: readonly ShareGptConversation[],
  opts: ShareGptTimelineOptions,
): Generator<ShareGptRequestPlan, void, undefined> {
  const { requestRate, replayCycles, rng } = opts;
  if (!conversations.some((c) => c.turns.length > 0)) return; // nothing to issue, even forever
  let k = 0;
  for (let pass = 1; replayCycles === 0 || pass <= replayCycles; pass++) {
    for (const ci of shuffledOrder(conversations.length, rng)) {
      const conv = conversations[ci];
      if (conv === undefined) continue;
      const conversationId = `${conv.id}_p${pass}`;
      for (const [turnIndex, t] of conv.turns.entries()) {
        const scheduledAtMs = requestRate > 0 ? (k * 1000) / requestRate : 0;
        yield {
          index: k++,
          conversationId,
          sourceId: conv.id,
          pass,
          turnIndex,
          turn: turnIndex + 1,
          contextTokens: t.contextTokens,
          generationTokens: t.generationTokens,
          scheduledAtMs,
        };
      }
    }
  }
}

/** 0 … n−1 in Fisher–Yates order drawn from `rng`. */
export function shuffledOrder(n: number, rng: Pick<Rng, 'int'>): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(0, i);
    const a = order[i] ?? i;
    order[i] = order[j] ?? j;
    order[j] = a;
  }
  return order;
}
