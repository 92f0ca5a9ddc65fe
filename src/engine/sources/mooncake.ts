// Mooncake trace replay (--mooncake-trace FILE; docs/workloads.md#mooncake-traces): JSON Lines, plain
// or zstd-compressed (.zst suffix or zstd magic), streamed a chunk at a time on every pass. Each record
// is one single-turn request whose context is the chain of its hash ids (workload/mooncake.ts), so the
// run is always block-granular: --trace-block-tokens (512) per block unless --kv-block-tokens says otherwise. Paced by
// the timestamps with --trace-speedup (0 = closed-loop), over --replay-cycles passes, like BurstGPT.
import { checkInputFileAsync } from '../../util/input-file.js';
import { messageOf } from '../../util/errors.js';
import { inert } from '../../util/safe-text.js';
import { readTextLineBatches, readTextLines, splitTextLineBatches, splitTextLines } from '../../util/text-lines.js';
import type { TextLinesOptions } from '../../util/text-lines.js';
import type { LineReadProblem } from '../../util/text-lines.js';
import { DEFAULT_ZSTD_COMMAND, hasZstdSuffix, startZstd, startsWithZstdMagic } from '../../trace/zstd.js';
import {
  MAX_MOONCAKE_LINE_CHARS,
  MOONCAKE_BLOCK_TOKENS,
  MooncakeBlockNumbers,
  MooncakeTraceError,
  createMooncakeReadStats,
  mooncakeBlocks,
  mooncakeRecords,
  mooncakeSessionKey,
  mooncakeTimeline,
  mooncakeTimelineBatches,
} from '../../workload/mooncake.js';
import type { MooncakeTimelineItem } from '../../workload/mooncake.js';
import { ChainColumns } from '../../workload/numbered-chains.js';
import type { NumberedChains } from '../../workload/numbered-chains.js';
import type { RunConfig } from '../../settings/run-config.js';
import { pulledUsers } from './recorded.js';
import type { RecordedShape } from './recorded.js';
import type { OpenedSource, WorkloadSourceDef } from './source.js';

const READ_CHUNK_BYTES = 64 * 1024;

function lineProblem(path: string, p: LineReadProblem): MooncakeTraceError {
  switch (p.kind) {
    case 'unusable':
      return new MooncakeTraceError(`Mooncake trace "${path}": ${p.problem} (expected a JSON Lines trace, or a .zst of one)`);
    case 'open':
      return new MooncakeTraceError(`cannot open Mooncake trace "${path}": ${messageOf(p.cause)}`, { cause: p.cause });
    case 'too-long':
      return new MooncakeTraceError(
        `Mooncake trace "${path}": line ${p.line} is longer than ${p.maxLineChars} characters; not a JSON Lines trace`,
      );
    case 'read':
      return new MooncakeTraceError(`cannot read Mooncake trace "${path}": ${messageOf(p.cause)}`, { cause: p.cause });
  }
}

async function isCompressed(path: string): Promise<boolean> {
  return hasZstdSuffix(path) || (await startsWithZstdMagic(path));
}

/** How a stream of text chunks is split: into lines, or into a chunk's lines at a time. */
type Splitter<T> = (chunks: AsyncIterable<string>, options: Omit<TextLinesOptions, 'chunkBytes'>) => AsyncGenerator<T>;

/** The decompressed lines of a .zst trace, split by `split`, through the system zstd; a failing zstd is the input's problem. */
async function* zstdLines<T>(path: string, split: Splitter<T>): AsyncGenerator<T> {
  const proc = await startZstd(DEFAULT_ZSTD_COMMAND, ['-d', '-c', '-q', '--', path], ['ignore', 'pipe', 'pipe']).catch((e: unknown) => {
    throw new MooncakeTraceError(`Mooncake trace "${path}": ${messageOf(e)}`, { cause: e });
  });
  const stdout = proc.child.stdout;
  if (stdout === null) throw new MooncakeTraceError('zstd started without a stdout pipe');
  stdout.setEncoding('utf8');
  const fail = (p: LineReadProblem): MooncakeTraceError => lineProblem(path, p);
  try {
    yield* split(stdout as AsyncIterable<string>, { maxLineChars: MAX_MOONCAKE_LINE_CHARS, fail });
    const failed = await proc.outcome;
    if (failed !== null) throw new MooncakeTraceError(`Mooncake trace "${path}" cannot be decompressed: ${failed.message}`);
  } finally {
    stdout.destroy();
    if (!proc.exited()) proc.child.kill();
  }
}

const readOptions = (path: string): TextLinesOptions => ({
  chunkBytes: READ_CHUNK_BYTES,
  maxLineChars: MAX_MOONCAKE_LINE_CHARS,
  fail: (p) => lineProblem(path, p),
});

/** A fresh stream of the trace's lines (one per pass). */
function traceLines(path: string, compressed: boolean): AsyncIterable<string> {
  return compressed ? zstdLines(path, splitTextLines) : readTextLines(path, readOptions(path));
}

/** A fresh stream of the trace's lines (one per pass), a batch per read chunk. */
function traceLineBatches(path: string, compressed: boolean): AsyncIterable<string[]> {
  return compressed ? zstdLines(path, splitTextLineBatches) : readTextLineBatches(path, readOptions(path));
}

/** Refuses a trace with no usable record (reading only up to the first one), naming the first skips. */
async function checkTrace(path: string, compressed: boolean, traceBlockTokens: number): Promise<void> {
  const stats = createMooncakeReadStats();
  const it = mooncakeRecords(traceLines(path, compressed), stats, traceBlockTokens)[Symbol.asyncIterator]();
  const first = await it.next();
  await it.return(undefined);
  if (first.done !== true) return;
  const why =
    stats.skipped === 0
      ? 'has no record'
      : `has no usable record: all ${stats.skipped} lines were skipped (${stats.skippedExamples.map((e) => `line ${e.line}: ${e.reason}`).join('; ')}${stats.skipped > stats.skippedExamples.length ? '; …' : ''})`;
  throw new MooncakeTraceError(
    `Mooncake trace "${path}" ${why}; expected JSON Lines like {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, …]}`,
  );
}

/** The block size of a Mooncake run: --kv-block-tokens, else the trace's own (--trace-block-tokens, 512). */
export function mooncakeBlockTokens(cfg: Pick<RunConfig, 'kvBlockTokens' | 'traceBlockTokens'>): number {
  return cfg.kvBlockTokens > 0 ? cfg.kvBlockTokens : cfg.traceBlockTokens;
}

/** A record as a request: single-turn, its context the chain of its hash ids (`traceBlockTokens` tokens per id). */
export function mooncakeShape(
  { record, index, scheduledAtMs }: MooncakeTimelineItem,
  blockTokens: number,
  traceBlockTokens = MOONCAKE_BLOCK_TOKENS,
): RecordedShape {
  const userId = `mooncake_user_${index % 1000}`;
  const id = `mooncake_req_${String(index).padStart(6, '0')}`;
  return {
    id,
    userId,
    contextTokens: record.inputLength,
    generationTokens: record.outputLength,
    cacheKey: id,
    turn: 1,
    previousTurnKeys: [],
    scheduledAtMs,
    blocks: mooncakeBlocks(record, blockTokens, traceBlockTokens),
  };
}

async function open(cfg: RunConfig): Promise<OpenedSource> {
  const path = cfg.mooncakeTrace ?? '';
  const checked = await checkInputFileAsync(path);
  if (!checked.ok) throw lineProblem(path, { kind: 'unusable', problem: checked.problem });
  let compressed: boolean;
  try {
    compressed = await isCompressed(path);
  } catch (e) {
    throw lineProblem(path, { kind: 'open', cause: e });
  }
  const traceBlockTokens = cfg.traceBlockTokens;
  await checkTrace(path, compressed, traceBlockTokens);
  const blockTokens = mooncakeBlockTokens(cfg);
  const stats = createMooncakeReadStats();
  const pacing = { speedup: cfg.traceSpeedup, replayCycles: cfg.replayCycles, traceBlockTokens };
  const items = mooncakeTimeline(() => traceLines(path, compressed), pacing, stats)[Symbol.asyncIterator]();
  /** A fresh pass of the same timeline as numbered chains, a read chunk's requests at a time. */
  async function* numberedChains(): AsyncGenerator<NumberedChains> {
    const numbers = new MooncakeBlockNumbers(blockTokens, traceBlockTokens);
    const columns = new ChainColumns();
    for await (const { records, scheduledAtMs } of mooncakeTimelineBatches(() => traceLineBatches(path, compressed), pacing, stats)) {
      for (const rec of records) numbers.chain(rec, columns);
      yield columns.take(scheduledAtMs, (i) => mooncakeSessionKey(records[i], blockTokens, traceBlockTokens));
    }
  }
  return {
    describe: () => ({
      kind: 'mooncake',
      path,
      compressed,
      block_tokens: blockTokens,
      trace_block_tokens: traceBlockTokens,
      records: stats.records,
      skipped_lines: stats.skipped,
      skipped_examples: stats.skippedExamples,
    }),
    logLines: () => [
      `Mooncake trace: ${inert(path)}${compressed ? ' (zstd)' : ''}, blocks of ${blockTokens} tokens, speed-up ${cfg.traceSpeedup}, cycles ${cfg.replayCycles || 'unlimited'}`,
    ],
    numberedChains,
    users: ({ cfg: switches, parts, rng, stop, share }) => {
      let failure: unknown;
      const context = { ...parts, rng: rng.fork('trace'), multiTurn: !switches.disableMultiTurn };
      const pool = pulledUsers(
        items,
        (item: MooncakeTimelineItem) => mooncakeShape(item, blockTokens, traceBlockTokens),
        context,
        (e) => {
          failure = e;
          stop.stopWith('failed');
        },
        share,
      );
      return { pool, conversationsLost: () => 0, sourceFailure: () => failure };
    },
  };
}

export const mooncakeSource: WorkloadSourceDef = {
  kind: 'mooncake',
  pick: { flag: '--mooncake-trace', what: 'Mooncake trace replay', picked: (f) => f.mooncakeTrace !== undefined },
  recorded: true,
  blockTokens: (f) => (f.mooncakeTrace !== undefined ? mooncakeBlockTokens(f) : undefined),
  inputs: (f) => (f.mooncakeTrace !== undefined ? [{ flag: '--mooncake-trace', path: f.mooncakeTrace }] : []),
  open,
  inputErrors: [MooncakeTraceError],
};
