// Runs one benchmark: setup (tiers, buffers, workload, RAG ingestion), the measured phase, and the
// hand-off of everything measured as a RunResult. Never prints: lines for the user go to `env.log`.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import { Recorder, kvReadBytes, kvWriteBytes } from '../metrics/recorder.js';
import type { DelaySummaryMs, EntrySizeSummary, RunResult, StopReason } from '../metrics/result.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { kvBytesPerToken } from '../model/models.js';
import type { Clock } from '../util/clock.js';
import { Rng } from '../util/rng.js';
import { ConversationManager } from '../workload/conversation.js';
import { PrefixMatcher } from '../workload/prefix.js';
import { RagDocumentManager } from '../workload/rag.js';
import type { Request } from '../workload/request.js';
import { dispatch, firstRequestsInScheduleOrder, sessionSource } from './dispatcher.js';
import type { DispatchControl, UserPool } from './dispatcher.js';
import { Autoscaler } from './autoscaler.js';
import type { AutoscalerSettings } from './autoscaler.js';
import { startAutoscaleLoop } from './autoscale-loop.js';
import type { TimelinePoint } from './autoscale-loop.js';
import { sessionStream, UserSession } from '../workload/session.js';
import { generateUser, userId, userStream } from '../workload/users.js';
import { processRequest } from './pipeline.js';
import type { PipelineOptions } from './pipeline.js';
import { describeSource, openWorkloadSource } from './workload-source.js';
import type { WorkloadSource } from './workload-source.js';
import { burstUsers, shareGptUsers } from './trace-sources.js';
import { shareGptTimeline } from '../workload/sharegpt.js';
import type { RunConfig } from '../settings/run-config.js';
import { setupRun } from './setup.js';
import type { RunSetup } from './setup.js';
import { precondition, prepopulate, PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from './prepare.js';
import { availableParallelism } from 'node:os';
import { GiB } from '../util/units.js';
import { messageOf } from '../util/errors.js';
import { captureMachine } from './machine.js';

export interface ProgressSnapshot {
  readonly elapsedSec: number;
  readonly durationSec: number;
  readonly requestsCompleted: number;
  readonly tokensPerSec: number;
  readonly storageReadBytesPerSec: number;
  readonly storageWriteBytesPerSec: number;
}

export interface RunEnvironment {
  readonly clock: Clock;
  readonly toolVersion: string;
  readonly log: (line: string) => void;
  readonly onProgress?: (p: ProgressSnapshot) => void;
  /** Receives the results as soon as the measurement ends, before the run's files are removed. */
  readonly onResult?: (result: RunResult) => void | Promise<void>;
  /** Aborting it stops the run early (SIGINT/SIGTERM); results so far are still returned. */
  readonly interrupt?: AbortSignal;
}

const PROGRESS_INTERVAL_MS = 1000;
/** The monitor samples every this many ms; its samples include the interval itself. */
const LOOP_DELAY_RESOLUTION_MS = 10;

export async function runBenchmark(cfg: RunConfig, env: RunEnvironment): Promise<RunResult> {
  const source = await openWorkloadSource(cfg); // bad datasets and traces fail before anything is set up
  if (source.kind === 'sharegpt') {
    const st = source.dataset.stats;
    env.log(`ShareGPT: ${st.conversationsLoaded} conversations, ${st.turns} turns from ${source.path} (${source.tokenizer} tokens; ${st.skippedPairs} misaligned pairs and ${st.skippedRecords} records skipped)`);
  }
  if (source.kind === 'burstgpt') env.log(`BurstGPT: ${source.files.length} file(s), speed-up ${cfg.traceSpeedup}, cycles ${cfg.replayCycles || 'unlimited'}`);
  const recorder = new Recorder();
  const setup = await setupRun(cfg, recorder, env.clock);
  try {
    for (const line of setup.memory.lines) env.log(line);
    const result = await measure(cfg, env, setup, recorder, source);
    // Deleting a run's entry files can take many seconds: hand the results over first.
    await env.onResult?.(result);
    return result;
  } finally {
    await setup.close();
  }
}

async function measure(cfg: RunConfig, env: RunEnvironment, setup: RunSetup, recorder: Recorder, source: WorkloadSource): Promise<RunResult> {
  const cache = setup.cache;
  const clock = env.clock;
  const bpt = kvBytesPerToken(cfg.model);
  const rng = new Rng(cfg.seed);
  const ws = cfg.settings;
  const conversations = cfg.disableMultiTurn ? undefined : new ConversationManager(ws.conversation);
  const prefix = cfg.disablePrefixCaching ? undefined : new PrefixMatcher(bpt, ws.prefixCache);
  const rag = cfg.enableRag ? new RagDocumentManager(cfg.model, ws.rag) : undefined;
  if (rag !== undefined) await ingestRag(rag, cfg.ragNumDocs, rng.fork('rag'), setup, env);
  const sessionOptions = {
    settings: ws,
    ...(conversations !== undefined ? { conversations } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
    ...(rag !== undefined ? { rag } : {}),
  };
  // Synthetic user i, drawn from its own streams: the same whenever it is made (autoscaling adds users
  // beyond --num-users on demand). Made only when the workload is synthetic.
  const sessions: UserSession[] = [];
  const usersRng = rng.fork('users');
  const sessionsRng = rng.fork('sessions');
  const sessionFor = (i: number): UserSession => {
    const id = userId(i);
    const s = new UserSession({ ...sessionOptions, profile: generateUser(id, userStream(usersRng, id), ws), rng: sessionStream(sessionsRng, id) });
    sessions.push(s);
    return s;
  };
  const traceContext = { settings: ws, rng: rng.fork('trace'), multiTurn: !cfg.disableMultiTurn, ...(prefix !== undefined ? { prefix } : {}), ...(rag !== undefined ? { rag } : {}) };
  let sourceFailure: unknown;
  const tracePool =
    source.kind === 'sharegpt'
      ? shareGptUsers(shareGptTimeline(source.dataset.conversations, { requestRate: cfg.requestRate, replayCycles: cfg.replayCycles, rng: rng.fork('sharegpt') }), traceContext)
      : source.kind === 'burstgpt'
        ? burstUsers(source.items, traceContext, (e) => {
            sourceFailure = e;
            stopWith('failed');
          })
        : undefined;
  const syntheticPool = (): UserPool => {
    if (cfg.maxRequests === 0) return (i) => sessionSource(sessionFor(i));
    const first = firstRequestsInScheduleOrder(Array.from({ length: cfg.numUsers }, (_, i) => sessionFor(i)), cfg.maxRequests);
    return (i) => first[i] ?? sessionSource(sessionFor(i));
  };
  const users = tracePool ?? syntheticPool();
  const autoscaler = cfg.enableAutoscaling ? new Autoscaler(autoscalerSettings(cfg), cfg.numUsers) : undefined;
  const timeline: TimelinePoint[] = [];
  let stopAutoscaling = (): void => undefined;
  const prepared = await prepareStorage(cfg, env, setup, recorder, prefix);

  // Setup traffic (RAG ingestion, pre-population, preconditioning) is not part of the measurement.
  recorder.reset();
  const qosTargets = Object.fromEntries(Object.entries(cfg.settings.qosProfiles).map(([k, v]) => [k, { targetP95Ms: v.targetLatencyP95Ms }]));
  const run = new RunMetrics(qosTargets, cfg.keepLatencySamples);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every waiting user and sleeping request listens to it
  let stopReason: StopReason = cfg.maxRequests > 0 ? 'max_requests' : 'duration';
  const stopWith = (reason: StopReason): void => {
    if (stop.signal.aborted) return;
    stopReason = reason;
    stop.abort();
    cache.stopInFlight(); // a multi-GiB entry in flight must not hold the end of the run
  };
  const onInterrupt = (): void => stopWith('interrupted');
  env.interrupt?.addEventListener('abort', onInterrupt, { once: true });
  if (env.interrupt?.aborted === true) stopWith('interrupted'); // interrupted while preparing
  let failure: unknown;

  const storageDir = setup.storage.dir;
  const watch = storageDir === undefined ? undefined : await DiskWatch.forPath(storageDir).catch(() => undefined);
  const diskBefore = await watch?.snapshot().catch(() => undefined);
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();
  const startMs = clock.now();
  const durationTimer = setTimeout(() => stopWith('duration'), cfg.durationSec * 1000);
  const progressTimer = setInterval(() => env.onProgress?.(progressOf(cfg, recorder, run, (clock.now() - startMs) / 1000)), PROGRESS_INTERVAL_MS);
  progressTimer.unref();
  const pipelineRng = rng.fork('pipeline');
  const secondsPerToken = cfg.settings.generationTiming[cfg.generationMode];

  const pipeline: PipelineOptions = {
    cache,
    ...(prefix !== undefined ? { prefix } : {}),
    multiTurn: conversations !== undefined,
    prefillOnly: cfg.prefillOnly,
    decodeOnly: cfg.decodeOnly,
    prepopulatedKeys: prepared.prepopulatedKeys,
    decodeBatchSize: ws.decode.batchSize,
    secondsPerToken,
    sleep: (ms) => sleep(ms, undefined, { signal: stop.signal }).catch(() => undefined),
    stopped: () => stop.signal.aborted,
  };

  const processOne = async (req: Request, enqueuedMs: number): Promise<void> => {
    const queueMs = clock.now() - enqueuedMs;
    try {
      const out = await processRequest(req, pipeline, pipelineRng);
      if (!out.completed) {
        run.recordAborted(out.multiTurnHits, out.multiTurnMisses);
        return;
      }
      if (cfg.maxRequests > 0 && run.requestsCompleted >= cfg.maxRequests) return stopWith('max_requests');
      run.record({
        qos: req.qos,
        e2eMs: clock.now() - enqueuedMs,
        queueMs,
        storageMs: out.storageMs,
        generationMs: out.generationMs,
        ...(out.prefillMs !== undefined ? { prefillMs: out.prefillMs } : {}),
        ...(out.decodeMs !== undefined ? { decodeMs: out.decodeMs } : {}),
        generatedTokens: req.generationTokens,
        multiTurnHits: out.multiTurnHits,
        multiTurnMisses: out.multiTurnMisses,
      });
    } catch (e) {
      failure ??= e;
      stopWith('failed');
    }
  };

  try {
    await dispatch({
      users,
      initialUsers: cfg.numUsers,
      ...(autoscaler !== undefined
        ? {
            onStart: (control: DispatchControl) => {
              stopAutoscaling = startAutoscaleLoop({
                autoscaler,
                control,
                recorder,
                run,
                clock,
                startMs,
                intervalMs: cfg.autoscaleIntervalSec * 1000,
                onPeak: () => stopWith('capacity_peak'),
                timeline,
              });
            },
          }
        : {}),
      workers: setup.workers,
      clock,
      startMs,
      process: processOne,
      sleep: (ms, signal) => sleep(ms, undefined, { signal }),
      stop: stop.signal,
    });
  } finally {
    stopAutoscaling();
    clearTimeout(durationTimer);
    clearInterval(progressTimer);
    loopDelay.disable();
    env.interrupt?.removeEventListener('abort', onInterrupt);
  }
  // Every source ran out: the request budget was met, or a replay finished its cycles.
  if (!stop.signal.aborted) stopReason = cfg.maxRequests > 0 ? 'max_requests' : 'workload_complete';
  failure ??= sourceFailure;
  // The window ends when the last I/O of the run has completed, tail included.
  const elapsedSec = (clock.now() - startMs) / 1000;
  const diskAfter = diskBefore === undefined ? undefined : await watch?.snapshot().catch(() => undefined);
  const warnings = [...setup.warnings, ...prepared.warnings];
  if (setup.trace !== undefined) {
    try {
      const rows = await setup.trace.close();
      env.log(`I/O trace: ${rows} rows written to ${cfg.ioTraceLog ?? ''}`);
    } catch (e) {
      warnings.push(`the I/O trace could not be written completely: ${messageOf(e)}`);
    }
  }
  if (failure !== undefined) warnings.push(`run stopped by an error: ${messageOf(failure)}`);

  const result: RunResult = {
    toolVersion: env.toolVersion,
    startedAt: new Date(Date.now() - elapsedSec * 1000).toISOString(),
    seed: cfg.seed,
    modelKey: cfg.model.key,
    bytesPerToken: bpt,
    performanceProfile: cfg.performanceProfile,
    effectiveConfig: cfg.effective,
    stopReason,
    elapsedSec,
    nominalDurationSec: cfg.durationSec,
    recorder,
    run,
    occupancy: Object.fromEntries(cache.order.map((t) => [t, { entries: cache.entries.count(t), usedBytes: cache.usedBytes(t), limitBytes: cache.limitBytes(t) }])),
    entrySizes: entrySizes(setup),
    ...(prefix !== undefined ? { prefix: prefix.stats } : {}),
    conversationsLost: sessions.reduce((n, s) => n + s.conversationsLost, 0),
    eventLoopDelayMs: delaySummary(loopDelay),
    ...(watch !== undefined && diskBefore !== undefined && diskAfter !== undefined ? { device: { name: watch.device.name, delta: diskDelta(diskBefore, diskAfter) } } : {}),
    storage: { dir: setup.storage.dir ?? '(none: trace mode)', ioMode: setup.storage.ioMode, fileSystem: setup.storage.fileSystem },
    workers: setup.workers,
    warnings,
    workloadSource: describeSource(source),
    ...(autoscaler !== undefined ? { autoscaling: { events: autoscaler.events, summary: autoscaler.summary(), timeline } } : {}),
    machine: await captureMachine(setup.storage),
  };
  if (failure !== undefined) throw new RunFailedError(result, failure);
  return result;
}

/** An unexpected failure mid-run, carrying the results gathered until then so they can be saved. */
export class RunFailedError extends Error {
  constructor(
    readonly partial: RunResult,
    override readonly cause: unknown,
  ) {
    super(`run failed: ${messageOf(cause)}`);
    this.name = 'RunFailedError';
  }
}

function autoscalerSettings(cfg: RunConfig): AutoscalerSettings {
  const a = cfg.settings.autoscaler;
  const sd = cfg.settings.saturationDetection;
  return {
    mode: cfg.autoscalerMode,
    targetSaturation: cfg.targetSaturation,
    minUsers: a.minUsers,
    maxUsers: Math.min(a.maxUsers, cfg.settings.validationLimits.maxUsers),
    scaleUpFactor: a.scaleUpFactor,
    scaleDownFactor: a.scaleDownFactor,
    consecutiveSamplesRequired: a.consecutiveSamplesRequired,
    readLatencyP95ThresholdMs: sd.readLatencyP95ThresholdMs,
    historyWindowSize: sd.historyWindowSize,
  };
}

interface Prepared {
  readonly prepopulatedKeys: readonly string[];
  readonly warnings: readonly string[];
}

/** Pre-population (--decode-only) and preconditioning (--precondition), before the timer starts. */
async function prepareStorage(cfg: RunConfig, env: RunEnvironment, setup: RunSetup, recorder: Recorder, prefix: PrefixMatcher | undefined): Promise<Prepared> {
  const signal = env.interrupt ?? new AbortController().signal;
  const warnings: string[] = [];
  let prepopulatedKeys: string[] = [];
  const writers = Math.max(1, availableParallelism());
  if (cfg.decodeOnly) {
    const n = cfg.numUsers * PREPOP_ENTRIES_PER_USER;
    env.log(`Pre-populating ${n} entries of ${PREPARE_ENTRY_TOKENS} tokens for decode-only mode…`);
    prepopulatedKeys = await prepopulate(setup.cache, n, writers, signal);
    // Shared prompts too, so a decode-only run reads them and writes nothing while measured.
    for (const p of prefix?.prompts ?? []) await setup.cache.allocate(p.key, p.tokens, 'prefill');
    env.log(`Pre-populated ${prepopulatedKeys.length} entries`);
  }
  if (cfg.precondition) {
    const limit = setup.cache.limitBytes('storage');
    const target = cfg.preconditionSizeGb > 0 ? cfg.preconditionSizeGb * GiB : 2 * limit;
    if (!Number.isFinite(target)) warnings.push('preconditioning skipped: the storage capacity is unknown (give --storage-capacity-gb or --precondition-size-gb)');
    else {
      const threads = cfg.preconditionThreads > 0 ? cfg.preconditionThreads : writers;
      env.log(`Preconditioning: writing ${(target / GiB).toFixed(1)} GiB in ${PREPARE_ENTRY_TOKENS}-token entries with ${threads} writers…`);
      const r = await precondition(setup.cache, recorder, target, threads, signal, env.log, () => env.clock.now());
      env.log(`Preconditioning done: ${(r.writtenBytes / GiB).toFixed(2)} GiB, ${r.entries} entries in ${r.seconds.toFixed(1)} s`);
      if (r.gaveUp) warnings.push(`preconditioning stopped early after repeated allocation failures (${(r.writtenBytes / GiB).toFixed(2)} GiB written)`);
    }
  }
  return { prepopulatedKeys, warnings };
}

/** RAG documents are written before the measured phase (the reference ingested during it). */
async function ingestRag(rag: RagDocumentManager, docs: number, rng: Rng, setup: RunSetup, env: RunEnvironment): Promise<void> {
  for (const plan of rag.planIngest(docs, rng)) {
    for (const chunk of plan.document.chunks) await setup.cache.allocate(chunk.key, chunk.tokens, 'prefill');
    for (const key of plan.evicted?.chunks.map((c) => c.key) ?? []) await setup.cache.delete(key);
  }
  env.log(`RAG: ingested ${rag.documentCount} documents`);
}

function delaySummary(h: ReturnType<typeof monitorEventLoopDelay>): DelaySummaryMs {
  // Node's samples are the time between ticks, so the interval is subtracted to leave the delay.
  const ms = (ns: number): number => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS) : 0);
  return { mean: ms(h.mean), p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
}

function entrySizes(setup: RunSetup): EntrySizeSummary {
  const sizes: number[] = [];
  for (const t of setup.cache.order) for (const e of setup.cache.entries.lruOrder(t)) sizes.push(e.size);
  if (sizes.length === 0) return { count: 0, minBytes: 0, meanBytes: 0, p95Bytes: 0, maxBytes: 0 };
  sizes.sort((a, b) => a - b);
  const total = sizes.reduce((a, b) => a + b, 0);
  return {
    count: sizes.length,
    minBytes: sizes[0] as number,
    meanBytes: total / sizes.length,
    p95Bytes: sizes[Math.min(sizes.length - 1, Math.floor(0.95 * sizes.length))] as number,
    maxBytes: sizes[sizes.length - 1] as number,
  };
}

function progressOf(cfg: RunConfig, rec: Recorder, run: RunMetrics, elapsedSec: number): ProgressSnapshot {
  const st = rec.traffic.storage;
  const per = (n: number): number => (elapsedSec > 0 ? n / elapsedSec : 0);
  return {
    elapsedSec,
    durationSec: cfg.durationSec,
    requestsCompleted: run.requestsCompleted,
    tokensPerSec: per(run.tokensGenerated),
    storageReadBytesPerSec: per(kvReadBytes(st)),
    storageWriteBytesPerSec: per(kvWriteBytes(st)),
  };
}
