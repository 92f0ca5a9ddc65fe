// The I/O trace's CSV row format (docs/reference-compat.md#rc-21), as pure functions so the writer, the reader and a future
// replayer agree byte for byte. Columns are the reference's; Operation adds `Delete` (entries removed
// from the last tier, and explicit deletes), which the reference never logged.
//
// Quoting follows RFC 4180 / Python's csv.QUOTE_MINIMAL (what the reference's csv.writer emits): a
// field holding a comma, a quote, CR or LF is wrapped in quotes with inner quotes doubled. Only the
// Key can need it. The reference ends lines with CRLF (csv.writer's default); we write LF and read both.
//
// The trace's own types are declared here, structurally identical to the cache's IoEvent, so this
// layer does not import from the layers above it (ARCHITECTURE.md#layers); a test checks the two stay compatible.
import { TraceFormatError } from './errors.js';

export type TraceOp = 'Write' | 'Read' | 'Delete';
export type TraceTier = 'gpu' | 'cpu' | 'storage';
export type TracePhase = 'Prefill' | 'Decode' | 'Both' | 'Evict';

/** One traced I/O, as the cache reports it (same shape as the cache's IoEvent). */
export interface TraceEvent {
  readonly op: TraceOp;
  readonly tier: TraceTier;
  readonly key: string;
  /** Bytes of the object (per rank: already divided by tensor parallelism). */
  readonly size: number;
  readonly phase: TracePhase;
}

/** A row read back from a trace. */
export interface TraceRow extends TraceEvent {
  /** Unix epoch seconds (microsecond precision in the file). */
  readonly timestamp: number;
}

export const TRACE_COLUMNS = ['Timestamp', 'Operation', 'Object_Size_Bytes', 'Tier', 'Key', 'Phase'] as const;
export const TRACE_HEADER = TRACE_COLUMNS.join(',');
/** Line terminator we write. */
export const TRACE_EOL = '\n';

const TIER_LABEL: Readonly<Record<TraceTier, string>> = { gpu: 'Tier-0', cpu: 'Tier-1', storage: 'Tier-2' };
const TIER_BY_LABEL: ReadonlyMap<string, TraceTier> = new Map((Object.keys(TIER_LABEL) as TraceTier[]).map((t) => [TIER_LABEL[t], t]));
const OPS: ReadonlySet<string> = new Set<TraceOp>(['Write', 'Read', 'Delete']);
const PHASES: ReadonlySet<string> = new Set<TracePhase>(['Prefill', 'Decode', 'Both', 'Evict']);

/** `Tier-0` / `Tier-1` / `Tier-2` for gpu / cpu / storage. */
export function tierLabel(tier: TraceTier): string {
  return TIER_LABEL[tier];
}

const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field, quoted only when it must be. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A row's text without its line terminator. Throws RangeError on a non-integer size or bad time. */
export function formatRow(event: TraceEvent, epochSeconds: number): string {
  if (!(epochSeconds >= 0) || epochSeconds === Infinity) throw new RangeError(`bad trace timestamp ${epochSeconds}`);
  if (!Number.isSafeInteger(event.size) || event.size < 0) throw new RangeError(`bad trace object size ${event.size}`);
  return `${epochSeconds.toFixed(6)},${event.op},${event.size},${TIER_LABEL[event.tier]},${csvField(event.key)},${event.phase}`;
}

// Byte-level encoding of a row, for the writer's hot path: no row string is built (trace mode writes
// hundreds of thousands of rows a second, and building, flattening and encoding row strings was a
// fifth of its CPU). RowEncoder's bytes are formatRow's text plus TRACE_EOL, as a test checks.

const COMMA = 0x2c;
const DOT = 0x2e;
const ZERO = 0x30;
const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
// Each constant carries its separators: "Read," then ",Tier-1," then ",Decode\n".
const OP_BYTES: ReadonlyMap<TraceOp, Uint8Array> = new Map((['Write', 'Read', 'Delete'] as const).map((op) => [op, ascii(`${op},`)]));
const TIER_BYTES: ReadonlyMap<TraceTier, Uint8Array> = new Map(
  (['gpu', 'cpu', 'storage'] as const).map((t) => [t, ascii(`,${TIER_LABEL[t]},`)]),
);
const PHASE_BYTES: ReadonlyMap<TracePhase, Uint8Array> = new Map(
  (['Prefill', 'Decode', 'Both', 'Evict'] as const).map((p) => [p, ascii(`,${p}${TRACE_EOL}`)]),
);
const NO_BYTES = new Uint8Array(0);

/** Bytes encodeRow may need for `event` (UTF-8 worst case, quoting included). */
export function maxRowBytes(event: TraceEvent): number {
  return 64 + 6 * event.key.length;
}

function putBytes(buf: Uint8Array, at: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) buf[at + i] = bytes[i];
  return at + bytes.length;
}

/** Decimal digits of a non-negative safe integer. */
function putDigits(buf: Uint8Array, at: number, n: number): number {
  if (n < 10) {
    buf[at] = ZERO + n;
    return at + 1;
  }
  let len = 0;
  if (n <= 0x7fffffff) {
    for (let x = n; x > 0; x = (x / 10) | 0) len++;
    for (let i = len - 1, x = n; i >= 0; i--) {
      const q = (x / 10) | 0;
      buf[at + i] = ZERO + (x - q * 10);
      x = q;
    }
  } else {
    for (let x = n; x > 0; x = Math.floor(x / 10)) len++;
    for (let i = len - 1, x = n; i >= 0; i--) {
      const q = Math.floor(x / 10);
      buf[at + i] = ZERO + (x - q * 10);
      x = q;
    }
  }
  return at + len;
}

/** Six digits of 0 ≤ n < 10^6, zero-padded. */
function putSixDigits(buf: Uint8Array, at: number, n: number): number {
  let x = n;
  for (let i = 5; i >= 0; i--) {
    const q = (x / 10) | 0;
    buf[at + i] = ZERO + (x - q * 10);
    x = q;
  }
  return at + 6;
}

/** "<seconds>." in a fresh Buffer (a Buffer like the rows', so the digit loops stay monomorphic). */
function encodeSecond(second: number): Buffer {
  const scratch = Buffer.alloc(24);
  const end = putDigits(scratch, 0, second);
  scratch[end] = DOT;
  return scratch.subarray(0, end + 1);
}

/** A key made only of printable ASCII other than the quote needs no quoting or UTF-8 encoding. */
function putPlainKey(buf: Uint8Array, at: number, key: string): number {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === COMMA) return -1;
    buf[at + i] = c;
  }
  return at + key.length;
}

/**
 * Encodes rows as bytes, for the writer's hot path. It remembers the encoded "<seconds>." of the last
 * timestamp, which the rows of one second share (a pure cache: the bytes never depend on it).
 */
export class RowEncoder {
  private second = -1;
  private secondBytes: Uint8Array = NO_BYTES;

  /**
   * Writes `event`'s row and TRACE_EOL into `buf` at `at` (which must have maxRowBytes(event) bytes
   * free) and returns the offset after it. Same checks and same bytes as formatRow + TRACE_EOL.
   */
  encode(event: TraceEvent, epochSeconds: number, buf: Buffer, at: number): number {
    if (!(epochSeconds >= 0) || epochSeconds >= 2 ** 42) {
      if (!(epochSeconds >= 0) || epochSeconds === Infinity) throw new RangeError(`bad trace timestamp ${epochSeconds}`);
      return at + buf.write(formatRow(event, epochSeconds) + TRACE_EOL, at, 'utf8'); // beyond year 141,000
    }
    if (!Number.isSafeInteger(event.size) || event.size < 0) throw new RangeError(`bad trace object size ${event.size}`);
    let second = Math.floor(epochSeconds);
    // The fraction is exact (Sterbenz); rounding it, not seconds × 10^6, rounds as toFixed(6) does.
    let micros = Math.round((epochSeconds - second) * 1e6);
    if (micros === 1e6) {
      second += 1;
      micros = 0;
    }
    if (second !== this.second) {
      this.second = second;
      this.secondBytes = encodeSecond(second);
    }
    let p = putBytes(buf, at, this.secondBytes);
    p = putSixDigits(buf, p, micros);
    buf[p++] = COMMA;
    p = putBytes(buf, p, OP_BYTES.get(event.op) ?? NO_BYTES);
    p = putDigits(buf, p, event.size);
    p = putBytes(buf, p, TIER_BYTES.get(event.tier) ?? NO_BYTES);
    const plain = putPlainKey(buf, p, event.key);
    p = plain >= 0 ? plain : p + buf.write(csvField(event.key), p, 'utf8');
    return putBytes(buf, p, PHASE_BYTES.get(event.phase) ?? NO_BYTES);
  }
}

/** Splits one CSV record into fields; a string result is the reason it is malformed. */
export function splitFields(record: string): string[] | string {
  if (!record.includes('"')) return record.split(',');
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (record[i] === '"') {
      let text = '';
      let j = i + 1;
      for (;;) {
        const close = record.indexOf('"', j);
        if (close === -1) return `unterminated quoted field at column ${fields.length + 1}`;
        text += record.slice(j, close);
        if (record[close + 1] === '"') {
          text += '"';
          j = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      fields.push(text);
      if (i === record.length) return fields;
      if (record[i] !== ',') return `unexpected text after the closing quote of column ${fields.length}`;
      i++;
    } else {
      const comma = record.indexOf(',', i);
      const text = comma === -1 ? record.slice(i) : record.slice(i, comma);
      if (text.includes('"')) return `stray quote in column ${fields.length + 1}`;
      fields.push(text);
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
}

const DECIMAL = /^\d+(\.\d+)?$/;
const INTEGER = /^\d+$/;

/** Shown in errors: the offending text, shortened. */
function quoteForError(text: string): string {
  const short = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return JSON.stringify(short);
}

/**
 * Parses one record (a line without its terminator; a quoted Key may span lines). `lineNumber` and
 * `file` only label the TraceFormatError thrown for a malformed record.
 */
export function parseRow(line: string, lineNumber = 1, file?: string): TraceRow {
  const fail = (reason: string): never => {
    throw new TraceFormatError(file, lineNumber, reason);
  };
  const fields = splitFields(line);
  if (typeof fields === 'string') return fail(`${fields}: ${quoteForError(line)}`);
  if (fields.length !== TRACE_COLUMNS.length) {
    return fail(`expected ${TRACE_COLUMNS.length} fields, found ${fields.length}: ${quoteForError(line)}`);
  }
  const [ts, op, size, tier, key, phase] = fields as [string, string, string, string, string, string];
  if (!DECIMAL.test(ts)) return fail(`bad Timestamp ${quoteForError(ts)} (epoch seconds expected)`);
  if (!OPS.has(op)) return fail(`bad Operation ${quoteForError(op)} (Write, Read or Delete expected)`);
  const bytes = Number(size);
  if (!INTEGER.test(size) || !Number.isSafeInteger(bytes)) return fail(`bad Object_Size_Bytes ${quoteForError(size)}`);
  const tierName = TIER_BY_LABEL.get(tier);
  if (tierName === undefined) return fail(`bad Tier ${quoteForError(tier)} (Tier-0, Tier-1 or Tier-2 expected)`);
  if (!PHASES.has(phase)) return fail(`bad Phase ${quoteForError(phase)} (Prefill, Decode, Both or Evict expected)`);
  return {
    timestamp: Number(ts),
    op: op as TraceOp,
    size: bytes,
    tier: tierName,
    key,
    phase: phase as TracePhase,
  };
}

/** Checks a trace's first record (a leading UTF-8 byte-order mark is tolerated). */
export function checkHeader(line: string, lineNumber = 1, file?: string): void {
  const text = line.startsWith('\uFEFF') ? line.slice(1) : line;
  if (text !== TRACE_HEADER) {
    throw new TraceFormatError(file, lineNumber, `expected the header ${quoteForError(TRACE_HEADER)}, found ${quoteForError(text)}`);
  }
}
