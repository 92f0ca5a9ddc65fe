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
import { closeSync, readSync } from 'node:fs';
import { openInputFile } from '../util/input-file.js';
import { arrayElements, parseElement } from '../util/json-stream.js';
import type { JsonArraySource } from '../util/json-stream.js';
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
    maxElementNote: 'no real conversation is that large',
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

/** Opens the dataset without ever blocking, refusing anything but a regular file (openInputFile: what was opened is judged). */
function openDataset(path: string): number {
  const opened = openInputFile(path);
  if (!opened.ok) throw new DatasetError(path, opened.problem, READABLE_FILE);
  return opened.fd;
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
  /** 0-based position of the conversation in the dataset (not the shuffled order): the same on every rank. */
  readonly conversationIndex: number;
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
          conversationIndex: ci,
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
