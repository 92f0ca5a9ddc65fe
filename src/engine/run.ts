// Runs one benchmark, phase by phase: open the workload source, set up the tiers, build the workload,
// prepare storage, the measured phase, and the hand-off of everything measured as a RunResult.
// Never prints: lines for the user go to `env.log`.
import { Recorder } from '../metrics/recorder.js';
import type { EntrySizeSummary, KvBlocksFacts, KvPoolFacts, MachineContext, MetadataCalibration, RunResult } from '../metrics/result.js';
import { calibrateAfterRun, calibrateForRun, mayCalibrate } from './metadata-calibration.js';
import type { CalibrationContext } from './metadata-calibration.js';
import { RequestMetrics } from '../metrics/request-metrics.js';
import { kvBytesPerToken } from '../model/models.js';
import type { Clock } from '../util/clock.js';
import { FailedWithPartialResults, messageOf } from '../util/errors.js';
import { Rng } from '../util/rng.js';
import { GiB, MiB } from '../util/units.js';
import { buildWorkloadParts } from './build-workload.js';
import type { WorkloadParts } from './build-workload.js';
import { pipelineOptions, requestServer, runMeasuredPhase } from './measured-phase.js';
import { RunTtft } from './ttft.js';
import type { MeasuredPhase } from './measured-phase.js';
import type { ProgressSnapshot } from '../metrics/progress.js';
import { preparationBudgetMs, prepareStorage } from './prepare.js';
import type { PrepareProgressListener } from './prepare.js';
import type { RunConfig } from '../settings/run-config.js';
import { captureMachine } from './machine.js';
import { setupRun } from './setup.js';
import type { RunSetup } from './setup.js';
import { StopController } from './stop-control.js';
import type { EntryFilesAt } from './entry-cleanup.js';
import { openWorkloadSource, runBlockTokens, sourceFor } from './sources/registry.js';
import { failureWarnings, leftBehindLine } from './failure-warnings.js';
import type { OpenedSource, RankShare, RunUsers, WorkloadSourceDef } from './sources/source.js';
import { routeModeOf } from '../settings/choices.js';
import { loadValidationTrace } from '../workload/validation-trace.js';
import { storageUnderTest } from './machine.js';
import type { RankSession } from './rank-session.js';
import { startRunTracing } from '../telemetry/session.js';
import type { TracerOptions } from '../telemetry/tracer.js';
import type { LatencyTracingOutcome } from '../metrics/trace-capture.js';

export interface RunEnvironment {
  readonly clock: Clock;
  readonly toolVersion: string;
  readonly log: (line: string) => void;
  readonly onProgress?: (p: ProgressSnapshot) => void;
  /** How far each long preparation step is (the CLI draws progress bars). */
  readonly onPrepareProgress?: PrepareProgressListener;
  /** Receives the results as soon as the measurement ends, before the run's files are removed. */
  readonly onResult?: (result: RunResult) => void | Promise<void>;
  /** Aborting it stops the run early (SIGINT/SIGTERM); results so far are still returned. */
  readonly interrupt?: AbortSignal;
  /** Told where the run's entry files are once the storage tier exists (a force-quit removes them). */
  readonly onEntryFiles?: (at: EntryFilesAt) => void;
  /** Hears where the run's own objects go in an object store (a force-quit names them: it cannot delete them). */
  readonly onObjects?: (where: string) => void;
  /** This run is one rank of several: meet them before and after the measured phase (engine/rank-session.ts). */
  readonly ranks?: RankSession;
  /** How --enable-latency-tracing runs bpftrace (tests point it at a missing executable); default: `bpftrace` as root. */
  readonly tracer?: Omit<TracerOptions, 'clock'>;
  /** The workload sources to pick from (engine/sources/registry.ts); tests pass a copy with a source of their own. */
  readonly sources?: readonly WorkloadSourceDef[];
}

/** --validation-trace read and reduced to its figures; a missing or malformed file throws ValidationTraceError. */
export type LoadedValidationTrace = RunResult['validationTrace'];

export function loadValidationFor(cfg: RunConfig): LoadedValidationTrace {
  return cfg.validationTrace === undefined ? undefined : { path: cfg.validationTrace, stats: loadValidationTrace(cfg.validationTrace) };
}

/**
 * One run. `validation` defaults to reading --validation-trace now; repeated trials pass the figures
 * read once. Bad input files fail here, before anything is set up.
 */
export async function runBenchmark(
  cfg: RunConfig,
  env: RunEnvironment,
  validation: LoadedValidationTrace = loadValidationFor(cfg),
): Promise<RunResult> {
  const source = await openWorkloadSource(cfg, env.sources); // bad datasets and traces fail before anything is set up
  for (const line of source.logLines()) env.log(line);
  const recorder = new Recorder();
  const setup = await setupRun(cfg, recorder, env.clock, env.onEntryFiles, env.ranks?.identity);
  if (setup.entryFiles !== undefined) env.onEntryFiles?.(setup.entryFiles);
  if (setup.objectsAt !== undefined) env.onObjects?.(setup.objectsAt);
  try {
    for (const line of setup.memory.lines) env.log(line);
    if (setup.layOut !== undefined) await layOutSlab(setup, env.log, env.interrupt);
    const result = await measure(cfg, env, setup, recorder, source, validation);
    // Deleting a run's entry files can take many seconds: hand the results over first.
    await env.onResult?.(result);
    return result;
  } finally {
    await setup.close();
    const left = setup.leftBehind?.();
    if (left !== undefined) env.log(leftBehindLine(left));
  }
}

/** Writes the slab pool whole before anything is measured, timed apart (kvcache_bench.slab.lay_out_*), and says so. */
async function layOutSlab(setup: RunSetup, log: (line: string) => void, interrupt: AbortSignal | undefined): Promise<void> {
  const plan = setup.slab?.();
  if (plan !== undefined)
    log(
      `Laying out the slab pool: ${plan.files} file(s), ${(plan.poolBytes / GiB).toFixed(2)} GiB, ${plan.slots} slots of ${(plan.slotBytes / MiB).toFixed(2)} MiB…`,
    );
  await setup.layOut?.(interrupt); // an interrupt stops it: the run then ends before measuring
  const done = setup.slab?.();
  if (done !== undefined)
    log(
      `Slab pool laid out: ${(done.layOutBytes / GiB).toFixed(2)} GiB written in ${done.layOutSec.toFixed(1)} s (before the measured window)`,
    );
}

/** Everything after setup: the workload, storage preparation, the measured phase, the result. */
async function measure(
  cfg: RunConfig,
  env: RunEnvironment,
  setup: RunSetup,
  recorder: Recorder,
  source: OpenedSource,
  validation: LoadedValidationTrace,
): Promise<RunResult> {
  const rng = new Rng(cfg.seed);
  // Made first, so whatever stops the run later goes through it; the I/O in flight is cut short then
  // (a multi-GiB entry must not hold the end of the run).
  const stop = new StopController(() => setup.cache.stopInFlight());
  setup.storageFull?.listen(() => stop.stopWith('storage_full'));
  const machine = captureMachine(setup.storage); // before the measured phase (the device was resolved at setup)
  env.log(storageUnderTest(machine, setup.storage));
  const parts = buildWorkloadParts(cfg, cfg.settings);
  const blockTokens = runBlockTokens(cfg);
  const turns = { cfg, setup, ranks: env.ranks, interrupt: env.interrupt };
  const calibration = await inTurnsOnHost('calibrate-before', turns, () =>
    calibrateMetadata(calibrationContext(cfg, setup, blockTokens, env.ranks), env.log),
  );
  const prepared = await prepareStorage({
    cfg,
    ...(blockTokens !== undefined ? { blockTokens } : {}),
    cache: setup.cache,
    recorder,
    workload: parts,
    ragRng: rng.fork('rag'),
    log: env.log,
    now: () => env.clock.now(),
    ...(env.interrupt !== undefined ? { interrupt: env.interrupt } : {}),
    deadline: AbortSignal.timeout(preparationBudgetMs(cfg.durationSec)),
    ...(env.onPrepareProgress !== undefined ? { onProgress: env.onPrepareProgress } : {}),
  });
  setup.payload?.resetStats(); // like the recorder: what preparation generated is not measured
  setup.fileIo?.resetStats();
  const share = rankShareOf(cfg, env.ranks, recorder);
  const users = source.users({ cfg, parts, rng, stop, ...(share !== undefined ? { share } : {}) });
  const requests = new RequestMetrics(qosTargetsOf(cfg), cfg.keepLatencySamples);
  const pipeline = pipelineOptions(cfg, setup.cache, parts, prepared.prepopulatedKeys, stop, recorder);
  const ttft = RunTtft.of({ ...cfg, traceMode: cfg.ioTraceLog !== undefined }); // modelled, beside the measured figures (issue 23)
  // Block-layer tracing brackets the measured phase only (its attach time is not measured).
  const tracing = cfg.enableLatencyTracing ? await startRunTracing(setup.storage, { ...env.tracer, clock: env.clock }) : undefined;
  for (const line of tracing?.lines ?? []) env.log(line);
  const rankSession = env.ranks;
  await rankSession?.start(env.interrupt); // every rank prepared: start at the agreed instant
  // The capture's window is the measured phase: the barrier wait is not in its rates (this rank did no
  // I/O meanwhile; other processes' requests to the device in that wait stay in the block histograms).
  tracing?.restartWindow();
  const measured = await runMeasuredPhase({
    cfg,
    clock: env.clock,
    device: setup.storage.device,
    workers: setup.workers,
    recorder,
    requests,
    stop,
    users: users.pool,
    serve: requestServer(
      cfg.maxRequests,
      pipeline,
      rng.fork('pipeline'),
      requests,
      stop,
      env.clock,
      ttft instanceof RunTtft ? ttft : undefined,
    ),
    ...(env.interrupt !== undefined ? { interrupt: env.interrupt } : {}),
    ...(env.onProgress !== undefined ? { onProgress: env.onProgress } : {}),
    ...(rankSession !== undefined ? { windowOpened: () => rankSession.windowOpened() } : {}),
    tiers: setup.cache,
  }).catch(async (e: unknown) => {
    await tracing?.stop(); // bpftrace must not outlive a failed measured phase
    throw e;
  });
  const latencyTracing = await tracing?.stop();
  const ranks = await rankSession?.end(measured.elapsedSec, env.interrupt); // before teardown: no deletion inside another rank's window
  const failure = stop.failure ?? users.sourceFailure();
  const warnings = [
    ...setup.warnings,
    ...prepared.warnings,
    ...measured.seriesWarnings,
    ...(tracing?.warnings ?? []),
    ...(await closeTrace(cfg, setup, env.log)),
  ];
  if (failure !== undefined) warnings.push(`run stopped by an error: ${messageOf(failure)}`);
  const full = await setup.storageFull?.warning();
  if (full !== undefined) warnings.push(full);
  warnings.push(...failureWarnings(recorder.snapshot()));
  warnings.push(...routeWarnings(share, recorder));
  warnings.push(...slabWarnings(setup));
  // Every source ran out: the request budget was met, or a replay finished its cycles.
  const stopReason = stop.reason(cfg.maxRequests > 0 ? 'max_requests' : 'workload_complete');
  // The window's figures first: the calibration after it may delete entries to make room for its files.
  const measuredResult = assembleResult({
    cfg,
    env,
    setup,
    recorder,
    requests,
    parts,
    users,
    source,
    measured,
    stopReason,
    warnings,
    machine,
    validation,
    ranks,
    latencyTracing,
    ttft,
    share,
    calibration,
  });
  await setup.cache.dropStopped(); // the medium then holds the entries alone: the room the calibration measures against the limit
  const endProblem = ranks?.barrier?.endProblem ?? undefined;
  const calibrated = await calibrateAfterWindow(calibration, { ...turns, blockTokens, full, endProblem, log: env.log });
  const result = calibrated === undefined ? measuredResult : { ...measuredResult, metadataCalibration: calibrated };
  if (failure !== undefined) throw new RunFailedError(result, failure);
  return result;
}

/**
 * This rank's share of the workload when it matters: ranks dividing a recorded trace (--route), or a
 * shared pool (synthetic users then name their conversations per rank). Every request the source
 * passes goes to the pool's account of the whole trace's reuse.
 */
function rankShareOf(cfg: RunConfig, ranks: RankSession | undefined, recorder: Recorder): RankShare | undefined {
  const place = ranks?.identity ?? { rank: 0, worldSize: 1 };
  if (runBlockTokens(cfg) === undefined || (cfg.kvPool !== 'shared' && place.worldSize <= 1)) return undefined;
  return {
    route: { mode: routeModeOf(cfg.route, cfg.kvPool), rank: place.rank, worldSize: place.worldSize },
    pooled: cfg.kvPool === 'shared',
    onRequest: (served, chain) => recorder.pool.recordRouted(served, chain),
  };
}

/**
 * A route that left this rank far from its fair share of the trace (session routing on a trace whose
 * requests all share their first block sends every request to one rank): said, so no one reads an idle
 * rank's figures as the storage's.
 */
function routeWarnings(share: RankShare | undefined, recorder: Recorder): string[] {
  if (share === undefined || share.route.worldSize <= 1 || share.route.mode === 'replicate') return [];
  const s = recorder.pool.snapshot();
  if (s.routedSeen < 20 * share.route.worldSize) return [];
  const served = s.routedServed / s.routedSeen;
  const fair = 1 / share.route.worldSize;
  if (served >= fair / 2 && served <= Math.min(1, 2 * fair)) return [];
  return [
    `--route ${share.route.mode}: this rank served ${(served * 100).toFixed(1)} % of the ${s.routedSeen} requests passed (a fair share is ${(fair * 100).toFixed(1)} %)${share.route.mode === 'session' ? "; the trace's sessions (requests sharing their first block) are few or uneven: --route round-robin divides it evenly" : ''}`,
  ];
}

function qosTargetsOf(cfg: RunConfig): Record<string, { targetP95Ms: number }> {
  return Object.fromEntries(Object.entries(cfg.settings.qosProfiles).map(([k, v]) => [k, { targetP95Ms: v.targetLatencyP95Ms }]));
}

/** Closes the I/O trace, if any, and logs its row count; returns a warning when it failed. */
async function closeTrace(cfg: RunConfig, setup: RunSetup, log: (line: string) => void): Promise<string[]> {
  if (setup.trace === undefined) return [];
  try {
    const rows = await setup.trace.close();
    log(`I/O trace: ${rows} rows written to ${cfg.ioTraceLog ?? ''}`);
    return [];
  } catch (e) {
    return [`the I/O trace could not be written completely: ${messageOf(e)}`];
  }
}

interface ResultInputs {
  readonly cfg: RunConfig;
  readonly env: RunEnvironment;
  readonly setup: RunSetup;
  readonly recorder: Recorder;
  readonly requests: RequestMetrics;
  readonly parts: WorkloadParts;
  readonly users: RunUsers;
  readonly source: OpenedSource;
  readonly measured: MeasuredPhase;
  readonly stopReason: RunResult['stopReason'];
  readonly warnings: readonly string[];
  readonly machine: MachineContext;
  readonly validation: LoadedValidationTrace;
  readonly ranks: RunResult['ranks'];
  readonly latencyTracing: LatencyTracingOutcome | undefined;
  readonly ttft: ReturnType<typeof RunTtft.of>;
  /** This rank's share of the workload (rankShareOf): present exactly when the results have a kv_pool block. */
  readonly share: RankShare | undefined;
  readonly calibration: MetadataCalibration | undefined;
}

/** The run as plain data: snapshots of everything measured, and what the cache holds at the end. */
function assembleResult(i: ResultInputs): RunResult {
  const { cfg, setup, measured } = i;
  const cache = setup.cache;
  return {
    toolVersion: i.env.toolVersion,
    startedAt: new Date(Date.now() - measured.elapsedSec * 1000).toISOString(),
    seed: cfg.seed,
    modelKey: cfg.model.key,
    bytesPerToken: kvBytesPerToken(cfg.model),
    performanceProfile: cfg.performanceProfile,
    effectiveConfig: cfg.effective,
    stopReason: i.stopReason,
    elapsedSec: measured.elapsedSec,
    nominalDurationSec: cfg.durationSec,
    recorded: i.recorder.snapshot(),
    requests: i.requests.snapshot(),
    occupancy: Object.fromEntries(
      cache.order.map((t) => [t, { entries: cache.entries.count(t), usedBytes: cache.usedBytes(t), limitBytes: cache.limitBytes(t) }]),
    ),
    entrySizes: entrySizes(setup),
    ...(i.parts.prefix !== undefined ? { prefix: i.parts.prefix.stats } : {}),
    conversationsLost: i.users.conversationsLost(),
    eventLoopDelayMs: measured.eventLoopDelayMs,
    ...(measured.device !== undefined ? { device: measured.device } : {}),
    ...(i.calibration !== undefined ? { metadataCalibration: i.calibration } : {}),
    storage: {
      dir: setup.storage.location,
      ioMode: setup.storage.ioMode,
      fileSystem: setup.storage.fileSystem,
      ...(setup.storage.layout !== undefined ? { layout: setup.storage.layout } : {}),
      ...(setup.storage.fileCalls !== undefined ? { fileCalls: setup.storage.fileCalls } : {}),
    },
    workers: setup.workers,
    warnings: i.warnings,
    workloadSource: i.source.describe(),
    machine: i.machine,
    mainThreadBusy: measured.mainThreadBusy,
    harnessCpu: measured.cpu,
    ...(setup.slab !== undefined ? { slab: setup.slab() } : {}),
    ...(setup.payload !== undefined ? { payload: setup.payload.stats } : {}),
    ...(setup.fileIo !== undefined ? { fileIo: setup.fileIo.stats } : {}),
    ...(cfg.ioTraceLog === undefined ? { metadataOps: i.recorder.metadata.snapshot() } : {}), // trace mode: no storage
    storageSetup: {
      traceMode: cfg.ioTraceLog !== undefined,
      ramFileSystem: setup.storage.inRam === 'file system',
      ...(setup.storage.inRam === 'backend' ? { ramBackend: setup.storage.kind } : {}),
      capacityExplicit: cfg.storageCapacityGb > 0,
    },
    ...(measured.autoscaling !== undefined ? { autoscaling: measured.autoscaling } : {}),
    timeline: measured.timeline,
    deviceTelemetry: measured.deviceTelemetry,
    ...(i.validation !== undefined ? { validationTrace: i.validation } : {}),
    ...(i.latencyTracing !== undefined ? { latencyTracing: i.latencyTracing } : {}),
    staleEntries: setup.staleEntries ?? null,
    storageCapacity:
      cfg.ioTraceLog !== undefined
        ? null
        : { limitBytes: cache.limitBytes('storage'), peakAllocatedBytes: cache.peakAllocatedBytes('storage') },
    ...(i.ranks !== undefined ? { ranks: i.ranks } : {}),
    ...kvBlocksOf(cfg, cache, i.recorder),
    ...kvPoolOf(cfg, setup, i.share, i.recorder),
    ...(i.ttft !== undefined ? { ttftModelled: i.ttft instanceof RunTtft ? i.ttft.result() : i.ttft } : {}),
    ...(setup.objectStore !== undefined ? { objectStore: setup.objectStore() } : {}),
  };
}

/** What both calibrations know of the run: its storage, its block size, trace mode. */
function calibrationContext(
  cfg: RunConfig,
  setup: RunSetup,
  blockTokens: number | undefined,
  ranks: RankSession | undefined,
): CalibrationContext {
  return {
    storage: setup.storage,
    // With ranks, a host's others wait at a barrier while one calibrates: it must end well within the barrier's timeout.
    ...(ranks !== undefined ? { budgetMs: (cfg.barrierTimeoutSec * 1000) / 2 } : {}),
    roomBytes: setup.cache.limitBytes('storage') - setup.cache.allocatedBytes('storage'),
    ...(blockTokens !== undefined ? { blockBytes: setup.cache.sizeOf(blockTokens) } : {}),
    traceMode: cfg.ioTraceLog !== undefined,
  };
}

/**
 * `calibrate` alone, or with several ranks in turns with the other ranks of this host (RankSession.inTurns):
 * the calibration reads the whole device's counters, so a peer's calibration or I/O beside it would
 * count as this rank's file system's own writes. Every rank of a run that may calibrate (the same
 * flags) takes part, whatever its device turns out to be; only a barrier failure throws.
 */
function inTurnsOnHost<T>(
  phase: string,
  o: {
    readonly cfg: RunConfig;
    readonly setup: RunSetup;
    readonly ranks: RankSession | undefined;
    readonly interrupt: AbortSignal | undefined;
  },
  calibrate: () => Promise<T>,
): Promise<T> {
  const may = mayCalibrate({ storage: o.setup.storage, traceMode: o.cfg.ioTraceLog !== undefined });
  return o.ranks === undefined || !may ? calibrate() : o.ranks.inTurns(phase, calibrate, o.interrupt);
}

/** A file-per-entry layout's metadata bytes per new file on this device, measured before anything else is written (the verdict expects them). */
async function calibrateMetadata(context: CalibrationContext, log: (line: string) => void): Promise<MetadataCalibration | undefined> {
  let c: MetadataCalibration | undefined;
  try {
    c = await calibrateForRun(context);
  } catch (e) {
    // A side measurement: a full or refusing file system is the run's to meet, not this step's to end it.
    log(`File-system metadata: not calibrated (${messageOf(e)}); the verdict allows nothing for metadata`);
    return undefined;
  }
  if (c !== undefined)
    log(
      `File-system metadata: ${(c.bytesPerNewFile / 1024).toFixed(1)} KiB written per new file${c.layout === 'fanout' ? ' at a fan-out path, its new directories included' : ''} (${c.layout} layout, least of ${c.roundsBytesPerFile.length} rounds of ${c.filesPerRound} files, ${c.seconds.toFixed(1)} s, before the window)` +
        (c.disturbed
          ? ': more than a file system writes for a file, so another writer was busy on the device; the verdict allows nothing for metadata'
          : ''),
    );
  return c;
}

/** What the calibration after the window needs of the run. */
interface AfterWindowContext {
  readonly cfg: RunConfig;
  readonly setup: RunSetup;
  readonly ranks: RankSession | undefined;
  readonly blockTokens: number | undefined;
  readonly full: string | undefined;
  /** The end barrier failed (a rank is missing): no turns are taken after it, they would wait for that rank until the timeout. */
  readonly endProblem: string | undefined;
  readonly log: (line: string) => void;
  readonly interrupt: AbortSignal | undefined;
}

/**
 * The calibration again, among the run's own entries now that its window is over (every rank's: it
 * runs after the ranks' end, in turns on a host), where a grown directory costs a new file more; the
 * verdict allows the larger. Not made after an interrupt (the user wants out) or on a full file system.
 */
async function calibrateAfterWindow(
  before: MetadataCalibration | undefined,
  o: AfterWindowContext,
): Promise<MetadataCalibration | undefined> {
  // No turn after an interrupt (the user wants out) or a failed end barrier (the turns would wait for the missing rank).
  const noTurn =
    o.interrupt?.aborted === true ? 'interrupted' : o.endProblem !== undefined ? `the end barrier failed: ${o.endProblem}` : undefined;
  if (noTurn !== undefined) return notCalibratedAfter(before, noTurn, o.log);
  try {
    return await inTurnsOnHost('calibrate-after', o, () => calibrateAmongEntriesHere(before, o));
  } catch (e) {
    o.log(`File-system metadata: not calibrated after the window (${messageOf(e)}); the verdict allows the figure from before it`);
    return before;
  }
}

/** `before`, saying why there is no figure after the window when there was one to take. */
function notCalibratedAfter(
  before: MetadataCalibration | undefined,
  why: string,
  log: (line: string) => void,
): MetadataCalibration | undefined {
  if (before !== undefined && !before.disturbed)
    log(`File-system metadata: not calibrated after the window (${why}); the verdict allows the figure from before it`);
  return before;
}

/** calibrateAfterWindow on this rank: its outcome logged, never thrown. */
async function calibrateAmongEntriesHere(
  before: MetadataCalibration | undefined,
  o: AfterWindowContext,
): Promise<MetadataCalibration | undefined> {
  if (before === undefined || before.disturbed) return before;
  if (o.full !== undefined || o.interrupt?.aborted === true)
    return notCalibratedAfter(before, o.full !== undefined ? 'the file system is full' : 'interrupted', o.log);
  try {
    // A full tier would leave the round's files no room under its limit: its least recently used
    // entries go first (teardown deletes them anyway), unless the pool is kept for a later run.
    const makeRoom = o.cfg.keepPool ? undefined : (bytes: number) => o.setup.cache.makeRoomAfterRun('storage', bytes);
    const after = await calibrateAfterRun(calibrationContext(o.cfg, o.setup, o.blockTokens, o.ranks), makeRoom);
    if (after === undefined) return before;
    o.log(
      `File-system metadata: ${(after.bytesPerNewFile / 1024).toFixed(1)} KiB written per new file among the run's entries (least of ${after.roundsBytesPerFile.length} rounds${after.fileBytes < before.fileBytes ? `, files of ${after.fileBytes / 1024} KiB to fit the storage tier's room under its limit` : ''}, ${after.seconds.toFixed(1)} s, after the window)` +
        (after.disturbed ? ': another writer was busy on the device; the verdict allows the figure from before the window' : ''),
    );
    return { ...before, afterWindow: after };
  } catch (e) {
    return notCalibratedAfter(before, messageOf(e), o.log);
  }
}

/** Entries refused for being larger than a slab slot: which flag to change. */
function slabWarnings(setup: RunSetup): string[] {
  const slab = setup.slab?.();
  if (slab?.largestRefusedBytes == null) return [];
  const need = Math.ceil(slab.largestRefusedBytes / MiB);
  return [
    `--kv-layout slab: entries larger than a slot (${(slab.slotBytes / MiB).toFixed(2)} MiB, up to ${(slab.largestRefusedBytes / MiB).toFixed(2)} MiB) were refused (refused_allocations), not written: give --slab-slot-mib ${need} or more, or --kv-block-tokens to store blocks`,
  ];
}

/** The block-granular figures, when the run is block-granular. */
function kvBlocksOf(cfg: RunConfig, cache: RunSetup['cache'], recorder: Recorder): { kvBlocks?: KvBlocksFacts } {
  const blockTokens = runBlockTokens(cfg);
  if (blockTokens === undefined) return {};
  // A source that implies a block size names its blocks itself (a trace's hash ids).
  const keys = sourceFor(cfg).blockTokens?.(cfg) !== undefined ? 'trace_hash_ids' : 'prefix_hash';
  return { kvBlocks: { blockTokens, blockBytes: cache.sizeOf(blockTokens), keys, stats: recorder.blocks.snapshot() } };
}

/** The pool and the route, for block-granular runs with a shared pool or ranks dividing the trace. */
function kvPoolOf(cfg: RunConfig, setup: RunSetup, share: RankShare | undefined, recorder: Recorder): { kvPool?: KvPoolFacts } {
  if (share === undefined) return {};
  const pool = setup.pool;
  return {
    kvPool: {
      pool: cfg.kvPool,
      route: share.route.mode,
      rank: share.route.rank,
      worldSize: share.route.worldSize,
      ...(pool !== undefined ? { shared: { atStart: pool.atStart, shareBytes: pool.shareBytes, keep: cfg.keepPool } } : {}),
      stats: recorder.pool.snapshot(),
    },
  };
}

/** An unexpected failure mid-run, carrying the results gathered until then so they can be saved. */
export class RunFailedError extends FailedWithPartialResults<RunResult> {
  constructor(partial: RunResult, cause: unknown) {
    super('run', partial, cause);
    this.name = 'RunFailedError';
  }
}

function entrySizes(setup: RunSetup): EntrySizeSummary {
  const sizes: number[] = [];
  for (const t of setup.cache.order) for (const e of setup.cache.entries.lruOrder(t)) sizes.push(e.size);
  if (sizes.length === 0) return { count: 0, minBytes: 0, meanBytes: 0, p95Bytes: 0, maxBytes: 0 };
  sizes.sort((a, b) => a - b);
  const total = sizes.reduce((a, b) => a + b, 0);
  return {
    count: sizes.length,
    minBytes: sizes[0],
    meanBytes: total / sizes.length,
    p95Bytes: sizes[Math.min(sizes.length - 1, Math.floor(0.95 * sizes.length))],
    maxBytes: sizes[sizes.length - 1],
  };
}
