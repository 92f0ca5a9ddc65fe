// Mooncake trace replay (--mooncake-trace; docs/workloads.md#mooncake-traces): the FAST'25 traces of
// kvcache-ai/Mooncake are JSON Lines, one request per line — `timestamp` (ms from the first request),
// `input_length` and `output_length` (tokens) and `hash_ids`, one id per 512-token block of the input,
// where equal ids mean equal prefixes (an id names its block *and* everything before it). Replayed as
// block chains, the trace's prefix reuse is reproduced exactly. Traces in the same format with other
// blocks (Alibaba's ATC'25 traces: 16 tokens per id) give their size as `traceBlockTokens`
// (--trace-block-tokens).
//
// This file is pure: lines in (from a file or a decompressor, streamed by the source), records and a
// timeline out. A line that is not a usable record is skipped and counted with its line number and
// reason, as BurstGPT rows are; the caller decides what an input with no usable line means.
import { excerpt } from '../util/excerpt.js';
import type { KvBlock } from './blocks.js';
import { MAX_BLOCK_TOKENS } from '../settings/choices.js';
import type { ChainColumns } from './numbered-chains.js';
import { pacedBatches, pacedTimeline } from './paced-timeline.js';
import type { PacedBatch, PacedItem, PacedReplayOptions } from './paced-timeline.js';

/** Tokens per hash id in the published FAST'25 traces (the --trace-block-tokens default). */
export const MOONCAKE_BLOCK_TOKENS = 512;

/** Refuses a block size outside 1 … MAX_BLOCK_TOKENS (a RangeError naming `what`). */
function checkBlockTokens(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_BLOCK_TOKENS)
    throw new RangeError(`${what} must be an integer from 1 to ${MAX_BLOCK_TOKENS} tokens, got ${n}`);
}

/** One usable trace line; `line` is 1-based. */
export interface MooncakeRecord {
  readonly timestampMs: number;
  readonly inputLength: number;
  readonly outputLength: number;
  /**
   * The ids, each in one canonical form: a safe integer as a number (also when the trace wrote it as a
   * string: "5" and 5 are one id), anything else as text — a whole number beyond 2^53 (a 64-bit hash
   * loses digits in JSON.parse but stays one id) or a short string. Keys are their text (`mc_<id>_…`).
   */
  readonly hashIds: readonly HashId[];
  readonly line: number;
}

export interface MooncakeSkip {
  readonly line: number;
  readonly reason: string;
}

/** Filled in place while lines are read: usable records, lines skipped, the first few skips. */
export interface MooncakeReadStats {
  records: number;
  skipped: number;
  readonly skippedExamples: MooncakeSkip[];
}

const MAX_SKIPPED_EXAMPLES = 5;
/** A trace line longer than this is not a Mooncake record (the longest real line is a few KB). */
export const MAX_MOONCAKE_LINE_CHARS = 4 * 1024 * 1024;
/** An input longer than this is not a request (2^24 tokens: far past any model's context). */
const MAX_INPUT_TOKENS = 1 << 24;

/** A trace that cannot be read as a Mooncake trace; the CLI reports it and exits 2. */
export class MooncakeTraceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MooncakeTraceError';
  }
}

export function createMooncakeReadStats(): MooncakeReadStats {
  return { records: 0, skipped: 0, skippedExamples: [] };
}

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

function count(o: Record<string, unknown>, name: string, max: number): Parsed<number> {
  const v = o[name];
  if (v === undefined) return { ok: false, reason: `no "${name}"` };
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > max)
    return { ok: false, reason: `"${name}" is ${excerpt(JSON.stringify(v), 40)}, expected a whole number from 0 to ${max}` };
  return { ok: true, value: v };
}

/** Longest string id accepted (a hex SHA-256 is 64). */
const MAX_ID_CHARS = 128;

/** A hash id in its canonical form (MooncakeRecord.hashIds). */
export type HashId = string | number;

/** The text of a safe integer as JavaScript writes it (no sign on 0, no leading zeros). */
const INTEGER_TEXT = /^-?(?:0|[1-9][0-9]{0,15})$/;

/**
 * An id in canonical form: a whole number (any size, any sign: hashes can be signed 64-bit) or a
 * non-empty short string; undefined when it is neither. Safe integers become numbers (interning them
 * is cheap), whichever way they were written; others stay text, so that equal texts are equal ids.
 */
function canonicalHashId(id: unknown): HashId | undefined {
  if (typeof id === 'number') {
    if (!Number.isInteger(id)) return undefined;
    return Number.isSafeInteger(id) ? id : String(id);
  }
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_CHARS) return undefined;
  if (INTEGER_TEXT.test(id)) {
    const n = Number(id);
    if (Number.isSafeInteger(n) && String(n) === id) return n;
  }
  return id;
}

/** A line → a record, or why it is skipped; `traceBlockTokens` tokens per id. Extra fields are ignored. */
export function parseMooncakeLine(text: string, line: number, traceBlockTokens = MOONCAKE_BLOCK_TOKENS): Parsed<MooncakeRecord> {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not a JSON object' };
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return { ok: false, reason: 'not a JSON object' };
  const rec = o as Record<string, unknown>;
  const ts = rec.timestamp;
  if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0)
    return { ok: false, reason: `"timestamp" is ${excerpt(JSON.stringify(ts) ?? 'missing', 40)}, expected ms ≥ 0` };
  const input = count(rec, 'input_length', MAX_INPUT_TOKENS);
  if (!input.ok) return input;
  if (input.value === 0) return { ok: false, reason: '"input_length" is 0: no context to cache' };
  const output = count(rec, 'output_length', MAX_INPUT_TOKENS);
  if (!output.ok) return output;
  const ids = rec.hash_ids;
  if (!Array.isArray(ids)) return { ok: false, reason: '"hash_ids" is not a list' };
  const expected = Math.ceil(input.value / traceBlockTokens);
  if (ids.length !== expected)
    return {
      ok: false,
      reason: `"hash_ids" has ${ids.length} ids for input_length ${input.value} (expected ${expected}, one per ${traceBlockTokens} tokens)`,
    };
  // Nearly always every id is a safe integer: that list is already its canonical form.
  if ((ids as unknown[]).every((id) => typeof id === 'number' && Number.isSafeInteger(id)))
    return { ok: true, value: { timestampMs: ts, inputLength: input.value, outputLength: output.value, hashIds: ids as number[], line } };
  const hashIds: HashId[] = [];
  for (const id of ids as unknown[]) {
    const text = canonicalHashId(id);
    if (text === undefined)
      return {
        ok: false,
        reason: `"hash_ids" holds ${excerpt(JSON.stringify(id) ?? String(id), 40)}, expected whole numbers or short strings`,
      };
    hashIds.push(text);
  }
  return { ok: true, value: { timestampMs: ts, inputLength: input.value, outputLength: output.value, hashIds, line } };
}

/**
 * The chain of a record in blocks of `blockTokens`. The trace's own blocks (`traceBlockTokens` tokens
 * per id) are the ids; for another block size each block is named by the id of the trace block holding
 * its last token and how far into that trace block it ends: an id fixes every token up to the end of
 * its block, so (id, end) fixes exactly the tokens before the block's end, and equal prefixes still
 * give equal keys.
 */
export function mooncakeBlocks(
  rec: Pick<MooncakeRecord, 'inputLength' | 'hashIds'>,
  blockTokens: number,
  traceBlockTokens = MOONCAKE_BLOCK_TOKENS,
): KvBlock[] {
  checkBlockTokens(blockTokens, 'block size');
  checkBlockTokens(traceBlockTokens, 'trace block size');
  const blocks: KvBlock[] = [];
  forEachBlock(rec, blockTokens, traceBlockTokens, (id, endInBlock, tokens) => blocks.push({ key: mooncakeKey(id, endInBlock), tokens }));
  return blocks;
}

/** A block's key: the id of the trace block holding its last token and where in it the block ends. */
function mooncakeKey(id: HashId, endInBlock: number): string {
  return `mc_${id}_${endInBlock}`;
}

/** Each block of the record's chain in order: its trace block's id, its end within that block, its tokens. */
function forEachBlock(
  rec: Pick<MooncakeRecord, 'inputLength' | 'hashIds'>,
  blockTokens: number,
  traceBlockTokens: number,
  visit: (id: HashId, endInBlock: number, tokens: number) => void,
): void {
  for (let start = 0; start < rec.inputLength; start += blockTokens) {
    const end = Math.min(start + blockTokens, rec.inputLength);
    const traceBlock = Math.floor((end - 1) / traceBlockTokens);
    const id = rec.hashIds[traceBlock];
    if (id === undefined) throw new RangeError(`record has no hash id for trace block ${traceBlock}`);
    visit(id, end - traceBlock * traceBlockTokens, end - start);
  }
}

/** The key of a record's first block (mooncakeBlocks' first key, without the others). */
export function mooncakeSessionKey(
  rec: Pick<MooncakeRecord, 'inputLength' | 'hashIds'>,
  blockTokens: number,
  traceBlockTokens: number,
): string {
  const end = Math.min(blockTokens, rec.inputLength);
  const traceBlock = Math.floor((end - 1) / traceBlockTokens);
  return mooncakeKey(rec.hashIds[traceBlock] ?? '', end - traceBlock * traceBlockTokens);
}

/** Hash ids below this are indexed through an array however few ids there are (4 MiB of table). */
const DIRECT_IDS = 1 << 20;
/** Past DIRECT_IDS, an id is indexed through the array while below this many times the ids seen, so the array stays linear in them. */
const DIRECT_SPREAD = 4;
/** A block's end in its trace block is at most MAX_BLOCK_TOKENS (2^20): index·2^21 + end tells (index, end) pairs apart. */
const END_SPAN = 2 ** 21;

/** A copy of `a` `length` long (at least its own), the new entries `fill`. */
function grown(a: Int32Array, length: number, fill: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(Math.max(length, a.length)).fill(fill);
  b.set(a);
  return b;
}

/**
 * Numbers the keys of records' chains (`mc_<id>_<end>`, as mooncakeBlocks names them) 0, 1, 2, … in
 * order of first appearance, without making the strings: equal keys, equal numbers. Each hash id gets
 * an index once — through an array for small whole numbers (the published traces number their ids
 * from 0), else a map — and a key is found from its id's index: a whole trace block's (nearly every
 * block) and the first other end seen in arrays, further ends in a map of index·2^21 + end. With
 * millions of ids, map lookups were most of the numbering's cost (~29 % of a 10.5M-reference pass's
 * profile, ~8 % with the arrays).
 */
export class MooncakeBlockNumbers {
  /** Hash ids that are small whole numbers → their index (−1: not seen). */
  private direct = new Int32Array(1024).fill(-1);
  /** Other hash ids → their index. */
  private readonly others = new Map<HashId, number>();
  private indexed = 0;
  /** Per index: the number of its whole trace block's key (−1: none yet) … */
  private whole = new Int32Array(1024).fill(-1);
  /** … and the end (0: none yet) and number of the first other key of the id. */
  private firstEnd = new Int32Array(1024);
  private firstNumber = new Int32Array(1024);
  /** Further keys: index·2^21 + end → number. */
  private readonly partial = new Map<number, number>();
  private next = 0;

  constructor(
    private readonly blockTokens: number,
    private readonly traceBlockTokens: number,
  ) {
    checkBlockTokens(blockTokens, 'block size');
    checkBlockTokens(traceBlockTokens, 'trace block size');
  }

  /** Appends the record's chain to `out` (each block's number and tokens) and ends it. */
  chain(rec: Pick<MooncakeRecord, 'inputLength' | 'hashIds'>, out: ChainColumns): void {
    const size = this.traceBlockTokens;
    if (this.blockTokens === size) {
      // The trace's own blocks: one per id, the last one short when the input ends inside it.
      const ids = rec.hashIds;
      const last = ids.length - 1;
      for (let i = 0; i < last; i++) out.block(this.numberOf(this.indexOf(ids[i]), size), size);
      const tail = rec.inputLength - last * size;
      out.block(this.numberOf(this.indexOf(ids[last]), tail), tail);
    } else
      forEachBlock(rec, this.blockTokens, size, (id, endInBlock, tokens) => out.block(this.numberOf(this.indexOf(id), endInBlock), tokens));
    out.endChain();
  }

  private indexOf(id: HashId): number {
    if (typeof id === 'number' && id >= 0) {
      if (id < this.direct.length) {
        let i = this.direct[id];
        if (i < 0) this.direct[id] = i = this.newIndex();
        return i;
      }
      if (id < Math.max(DIRECT_IDS, DIRECT_SPREAD * this.indexed)) {
        this.growDirect(id);
        return this.indexOf(id);
      }
    }
    let i = this.others.get(id);
    if (i === undefined) this.others.set(id, (i = this.newIndex()));
    return i;
  }

  private numberOf(index: number, endInBlock: number): number {
    if (endInBlock === this.traceBlockTokens) {
      let k = this.whole[index];
      if (k < 0) this.whole[index] = k = this.next++;
      return k;
    }
    const first = this.firstEnd[index];
    if (first === endInBlock) return this.firstNumber[index];
    if (first === 0) {
      this.firstEnd[index] = endInBlock;
      return (this.firstNumber[index] = this.next++);
    }
    const pair = index * END_SPAN + endInBlock;
    let k = this.partial.get(pair);
    if (k === undefined) this.partial.set(pair, (k = this.next++));
    return k;
  }

  private newIndex(): number {
    const i = this.indexed++;
    if (i === this.whole.length) {
      this.whole = grown(this.whole, 2 * i, -1);
      this.firstEnd = grown(this.firstEnd, 2 * i, 0);
      this.firstNumber = grown(this.firstNumber, 2 * i, 0);
    }
    return i;
  }

  /** Makes the array reach `id`, moving there the ids the map holds that it now reaches. */
  private growDirect(id: number): void {
    let length = this.direct.length;
    while (length <= id) length *= 2;
    this.direct = grown(this.direct, length, -1);
    for (const [h, i] of this.others)
      if (typeof h === 'number' && h >= 0 && h < length) {
        this.direct[h] = i;
        this.others.delete(h);
      }
  }
}

function recordSkip(stats: MooncakeReadStats, skip: MooncakeSkip): void {
  stats.skipped++;
  if (stats.skippedExamples.length < MAX_SKIPPED_EXAMPLES) stats.skippedExamples.push(skip);
}

/** Numbers the lines of one stream and turns each into a record, or counts why it is skipped. */
class RecordReader {
  private line = 0;
  constructor(
    private readonly stats: MooncakeReadStats,
    private readonly traceBlockTokens: number,
  ) {
    checkBlockTokens(traceBlockTokens, 'trace block size');
  }

  /** The next line's record; undefined for a blank line (ignored) or a bad one (counted). */
  read(text: string): MooncakeRecord | undefined {
    const line = ++this.line;
    if (text.trim() === '') return undefined;
    const parsed = parseMooncakeLine(text, line, this.traceBlockTokens);
    if (parsed.ok) {
      this.stats.records++;
      return parsed.value;
    }
    recordSkip(this.stats, { line, reason: parsed.reason });
    return undefined;
  }
}

/** The usable records of a stream of lines, in order; blank lines are ignored, bad ones counted in `stats`. */
export async function* mooncakeRecords(
  lines: AsyncIterable<string>,
  stats: MooncakeReadStats,
  traceBlockTokens = MOONCAKE_BLOCK_TOKENS,
): AsyncGenerator<MooncakeRecord> {
  const reader = new RecordReader(stats, traceBlockTokens);
  for await (const text of lines) {
    const rec = reader.read(text);
    if (rec !== undefined) yield rec;
  }
}

/** mooncakeRecords a batch of lines at a time (a batch's usable records in one array, none left out). */
export async function* mooncakeRecordBatches(
  lineBatches: AsyncIterable<readonly string[]>,
  stats: MooncakeReadStats,
  traceBlockTokens = MOONCAKE_BLOCK_TOKENS,
): AsyncGenerator<MooncakeRecord[]> {
  const reader = new RecordReader(stats, traceBlockTokens);
  for await (const lines of lineBatches) {
    const records: MooncakeRecord[] = [];
    for (const text of lines) {
      const rec = reader.read(text);
      if (rec !== undefined) records.push(rec);
    }
    if (records.length > 0) yield records;
  }
}

export type MooncakeTimelineItem = PacedItem<MooncakeRecord>;
export interface MooncakeReplayOptions extends PacedReplayOptions {
  /** Tokens per hash id (default 512, the FAST'25 traces'). */
  readonly traceBlockTokens?: number;
}

/**
 * The replay schedule over `passes()` (each call a fresh stream of the trace's lines), paced as
 * BurstGPT's (paced-timeline.ts; timestamps in ms). A later pass asks the same prefixes again, so its
 * blocks hit what the earlier pass left in the cache. `stats` are filled during the first pass.
 */
export function mooncakeTimeline(
  passes: () => AsyncIterable<string>,
  options: MooncakeReplayOptions,
  stats: MooncakeReadStats = createMooncakeReadStats(),
): AsyncGenerator<MooncakeTimelineItem> {
  const records = (pass: number): AsyncIterable<MooncakeRecord> =>
    mooncakeRecords(passes(), pass === 0 ? stats : createMooncakeReadStats(), options.traceBlockTokens);
  return pacedTimeline(records, (r) => r.timestampMs, 1, options);
}

/** mooncakeTimeline over batches of lines (`passes()` gives each pass's), scheduled a batch of records at a time. */
export function mooncakeTimelineBatches(
  passes: () => AsyncIterable<readonly string[]>,
  options: MooncakeReplayOptions,
  stats: MooncakeReadStats = createMooncakeReadStats(),
): AsyncGenerator<PacedBatch<MooncakeRecord>> {
  const records = (pass: number): AsyncIterable<MooncakeRecord[]> =>
    mooncakeRecordBatches(passes(), pass === 0 ? stats : createMooncakeReadStats(), options.traceBlockTokens);
  return pacedBatches(records, (r) => r.timestampMs, 1, options);
}
