// Work done before the measured phase (docs/reference-compat.md#rc-35): RAG ingestion, pre-population for --decode-only
// and preconditioning for --precondition. All write through the normal waterfall; the recorder is
// reset afterwards, so none of this traffic is part of the measurement.
// Preparation obeys the clock and the signals: it stops at the first SIGINT/SIGTERM, and at its
// deadline (preparationBudgetMs: --duration again, at least a minute), each step then saying in a
// warning how far it got.
import { availableParallelism } from 'node:os';
import { blockChain } from '../workload/blocks.js';
import type { KvBlock } from '../workload/blocks.js';
import type { TieredCache } from '../cache/tiered-cache.js';
import type { Recorder } from '../metrics/recorder.js';
import type { Rng } from '../util/rng.js';
import { GiB } from '../util/units.js';
import type { RagDocumentManager } from '../workload/rag.js';
import type { RunConfig } from '../settings/run-config.js';
import type { WorkloadParts } from './build-workload.js';

/** Entry size of pre-populated and preconditioning entries, as the reference. */
export const PREPARE_ENTRY_TOKENS = 2048;
/** Pre-populated entries per user in decode-only mode. */
export const PREPOP_ENTRIES_PER_USER = 10;
/** A preconditioning writer gives up after this many consecutive failed allocations. */
export const MAX_CONSECUTIVE_FAILURES = 50;
/** The least time preparation is given, however short --duration: a smoke run's setup is not cut by a slow disk. */
export const MIN_PREPARATION_SEC = 60;

/** How long preparation may take: the measured duration again, at least MIN_PREPARATION_SEC. */
export function preparationBudgetMs(durationSec: number): number {
  return Math.max(durationSec, MIN_PREPARATION_SEC) * 1000;
}

/** A long preparation step. */
export type PreparePhase = 'rag_ingestion' | 'prepopulation' | 'preconditioning';

/**
 * How far a preparation step is: `done` of `total` units (documents, entries, bytes). Emitted once
 * with done 0 when the step starts, after every unit, and once with `finished` when it ends (done may
 * then be below total: cut by the deadline or a signal). The CLI renders these (a bar on a TTY, a
 * line per 10 % otherwise); the engine never prints them.
 */
export interface PrepareProgress {
  readonly phase: PreparePhase;
  readonly done: number;
  readonly total: number;
  readonly unit: 'documents' | 'entries' | 'bytes';
  readonly finished: boolean;
}

export type PrepareProgressListener = (p: PrepareProgress) => void;

/** The listener of one step: `tick(done)` while it runs, `finish(done)` once. */
function stepProgress(on: PrepareProgressListener | undefined, phase: PreparePhase, total: number, unit: PrepareProgress['unit']) {
  const emit = (done: number, finished: boolean): void => on?.({ phase, done, total, unit, finished });
  emit(0, false);
  return { tick: (done: number) => emit(done, false), finish: (done: number) => emit(done, true) };
}

async function runWriters(count: number, writer: () => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: Math.max(1, count) }, writer));
}

/**
 * The block chain of the pre-populated entry `key` (block-granular decode-only runs): its
 * PREPARE_ENTRY_TOKENS tokens in blocks, keyed like any context's (workload/blocks.ts).
 */
export function prepopulatedChain(key: string, blockTokens: number): KvBlock[] {
  return blockChain([{ id: key, tokens: PREPARE_ENTRY_TOKENS }], blockTokens);
}

/**
 * Writes `prepop_<i>` entries for decode-only runs — in block mode each entry's chain of blocks, all of
 * which must be written for the entry to count — and returns their keys.
 */
export async function prepopulate(
  cache: TieredCache,
  entries: number,
  writers: number,
  signal: AbortSignal,
  onEntry: (attempted: number) => void = () => undefined,
  blockTokens?: number,
): Promise<string[]> {
  const keys: string[] = [];
  let next = 0;
  let attempted = 0;
  const write = async (key: string): Promise<boolean> => {
    if (blockTokens === undefined) return (await cache.allocate(key, PREPARE_ENTRY_TOKENS, 'prefill')).ok;
    for (const block of prepopulatedChain(key, blockTokens))
      if (!(await cache.allocate(block.key, block.tokens, 'prefill')).ok) return false;
    return true;
  };
  await runWriters(writers, async () => {
    while (!signal.aborted) {
      const i = next++;
      if (i >= entries) return;
      const key = `prepop_${i}`;
      if (await write(key)) keys.push(key);
      onEntry(++attempted);
    }
  });
  keys.sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)));
  return keys;
}

export interface PreconditionResult {
  readonly writtenBytes: number;
  readonly entries: number;
  readonly seconds: number;
  /** True when every writer gave up (too many consecutive failures) before the target. */
  readonly gaveUp: boolean;
}

/**
 * Writes `precond_<seq>` entries with `writers` concurrent writers until `targetBytes` have been
 * written, so an SSD reaches steady state before it is measured. `onBytes` hears the bytes written so
 * far after each entry.
 */
export async function precondition(
  cache: TieredCache,
  recorder: Recorder,
  targetBytes: number,
  writers: number,
  signal: AbortSignal,
  now: () => number,
  onBytes: (written: number) => void = () => undefined,
): Promise<PreconditionResult> {
  const start = now();
  let seq = 0;
  let entries = 0;
  let giveUps = 0;
  const written = (): number => recorder.counters.totalWriteBytes;
  const base = written();
  await runWriters(writers, async () => {
    let failures = 0;
    while (!signal.aborted && written() - base < targetBytes) {
      const r = await cache.allocate(`precond_${seq++}`, PREPARE_ENTRY_TOKENS, 'prefill');
      if (r.ok) {
        failures = 0;
        entries++;
      } else if (++failures >= MAX_CONSECUTIVE_FAILURES) {
        giveUps++;
        return;
      }
      onBytes(written() - base);
    }
  });
  return { writtenBytes: written() - base, entries, seconds: (now() - start) / 1000, gaveUp: giveUps >= Math.max(1, writers) };
}

/** What the preparation needs from the run. */
export interface PrepareInputs {
  readonly cfg: Pick<
    RunConfig,
    'enableRag' | 'ragNumDocs' | 'decodeOnly' | 'numUsers' | 'precondition' | 'preconditionSizeGb' | 'preconditionThreads'
  >;
  /** Tokens per KV block of a block-granular run (pre-population writes chains of blocks); absent: whole entries. */
  readonly blockTokens?: number;
  readonly cache: TieredCache;
  readonly recorder: Recorder;
  readonly workload: WorkloadParts;
  /** The stream RAG ingestion draws from. */
  readonly ragRng: Rng;
  readonly log: (line: string) => void;
  readonly now: () => number;
  /** Aborting it stops the preparation early (SIGINT/SIGTERM); the run then stops as interrupted. */
  readonly interrupt?: AbortSignal;
  /** Aborted when the preparation's time is up: what is left undone is skipped, with a warning. */
  readonly deadline?: AbortSignal;
  /** Hears how far each long step is (RAG ingestion, pre-population, preconditioning). */
  readonly onProgress?: PrepareProgressListener;
}

export interface Prepared {
  readonly prepopulatedKeys: readonly string[];
  readonly warnings: readonly string[];
}

/**
 * Everything written before the timer starts: RAG documents (the reference ingested them during the
 * measured phase), pre-population (--decode-only) and preconditioning (--precondition). Their traffic
 * is then wiped from the recorder: none of it is measured.
 */
export async function prepareStorage(p: PrepareInputs): Promise<Prepared> {
  const signal = preparationSignal(p);
  const warnings: string[] = [];
  if (p.workload.rag !== undefined) warnings.push(...(await ingestRag(p, p.workload.rag, signal)));
  const writers = Math.max(1, availableParallelism());
  const prepopulatedKeys = p.cfg.decodeOnly ? await prepopulateForDecode(p, writers, signal, warnings) : [];
  if (p.cfg.precondition) warnings.push(...(await preconditionStorage(p, writers, signal)));
  p.recorder.reset();
  return { prepopulatedKeys, warnings };
}

/** Aborted at the first of the interrupt and the deadline. */
function preparationSignal(p: PrepareInputs): AbortSignal {
  const signals = [p.interrupt, p.deadline].filter((s): s is AbortSignal => s !== undefined);
  return signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;
}

/** A warning for a step cut short by the deadline (an interrupt needs none: the run says it was interrupted). */
function cutShort(p: PrepareInputs, what: string): string[] {
  return p.deadline?.aborted === true && p.interrupt?.aborted !== true ? [`${what} stopped at the preparation deadline (--duration)`] : [];
}

async function ingestRag(p: PrepareInputs, rag: RagDocumentManager, signal: AbortSignal): Promise<string[]> {
  // One document at a time (not a plan of all of them first): a million documents must neither
  // be held in memory at once nor outlast the deadline.
  let ingested = 0;
  const progress = stepProgress(p.onProgress, 'rag_ingestion', p.cfg.ragNumDocs, 'documents');
  while (ingested < p.cfg.ragNumDocs && !signal.aborted) {
    const plan = rag.ingest(p.ragRng);
    ingested++;
    for (const chunk of plan.document.chunks) {
      // An interrupt ends the run, so the document's remaining chunks would never be read: stop between
      // chunks, not only between documents (a large model's document is many big entries). The deadline
      // lets the document finish: the measured phase reads it whole.
      if (p.interrupt?.aborted === true) break;
      await p.cache.allocate(chunk.key, chunk.tokens, 'prefill');
    }
    if (p.interrupt?.aborted === true) break;
    for (const key of plan.evicted?.chunks.map((c) => c.key) ?? []) await p.cache.delete(key);
    progress.tick(ingested);
  }
  progress.finish(ingested);
  p.log(`RAG: ingested ${rag.documentCount} documents`);
  return ingested < p.cfg.ragNumDocs ? cutShort(p, `RAG ingestion: ${ingested} of ${p.cfg.ragNumDocs} documents ingested,`) : [];
}

async function prepopulateForDecode(p: PrepareInputs, writers: number, signal: AbortSignal, warnings: string[]): Promise<string[]> {
  const n = p.cfg.numUsers * PREPOP_ENTRIES_PER_USER;
  const blocks = p.blockTokens !== undefined ? ` (chains of ${p.blockTokens}-token blocks)` : '';
  p.log(`Pre-populating ${n} entries of ${PREPARE_ENTRY_TOKENS} tokens${blocks} for decode-only mode…`);
  const progress = stepProgress(p.onProgress, 'prepopulation', n, 'entries');
  const keys = await prepopulate(p.cache, n, writers, signal, progress.tick, p.blockTokens);
  progress.finish(keys.length);
  // Shared prompts too, so a decode-only run reads them and writes nothing while measured (whole entries: a block run reads its chains only).
  for (const prompt of p.blockTokens === undefined ? (p.workload.prefix?.prompts ?? []) : []) {
    if (signal.aborted) break;
    await p.cache.allocate(prompt.key, prompt.tokens, 'prefill');
  }
  p.log(`Pre-populated ${keys.length} entries`);
  if (keys.length < n) warnings.push(...cutShort(p, `pre-population: ${keys.length} of ${n} entries written,`));
  return keys;
}

/** Returns the warnings of a preconditioning skipped or cut short. */
async function preconditionStorage(p: PrepareInputs, writers: number, signal: AbortSignal): Promise<string[]> {
  const limit = p.cache.limitBytes('storage');
  const target = p.cfg.preconditionSizeGb > 0 ? p.cfg.preconditionSizeGb * GiB : 2 * limit;
  if (!Number.isFinite(target))
    return ['preconditioning skipped: the storage capacity is unknown (give --storage-capacity-gb or --precondition-size-gb)'];
  const threads = p.cfg.preconditionThreads > 0 ? p.cfg.preconditionThreads : writers;
  p.log(`Preconditioning: writing ${(target / GiB).toFixed(1)} GiB in ${PREPARE_ENTRY_TOKENS}-token entries with ${threads} writers…`);
  const progress = stepProgress(p.onProgress, 'preconditioning', target, 'bytes');
  const r = await precondition(p.cache, p.recorder, target, threads, signal, p.now, progress.tick);
  progress.finish(r.writtenBytes);
  p.log(`Preconditioning done: ${(r.writtenBytes / GiB).toFixed(2)} GiB, ${r.entries} entries in ${r.seconds.toFixed(1)} s`);
  if (r.gaveUp)
    return [`preconditioning stopped early after repeated allocation failures (${(r.writtenBytes / GiB).toFixed(2)} GiB written)`];
  return r.writtenBytes < target
    ? cutShort(p, `preconditioning: ${(r.writtenBytes / GiB).toFixed(2)} of ${(target / GiB).toFixed(2)} GiB written,`)
    : [];
}
