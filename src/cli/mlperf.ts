// `kv-cache mlperf`: the MLPerf v3.0 KV-cache sequence in one command. Checks everything first (flags,
// CLOSED locks, directories and their file systems, mpirun, every trial's kv-cache flags), then runs
// the plan (mlperf/plan.ts): probe, preconditioning, trials with their delays, each trial's ranks
// under mpirun (or one rank alone), and merges the rank files into the summary. Ctrl-C stops the
// running trial (its ranks save partial results), merges what finished and exits 130.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, openSync, closeSync, statSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { BarrierError, DirStore, FileBarrier } from '../engine/barrier.js';
import { realBarrierTime } from '../engine/rank-session.js';
import { detectRank } from '../engine/ranks.js';
import { deviceForPath } from '../metrics/diskstats.js';
import { CheckInputError } from '../mlperf/check/input.js';
import { checkLines } from '../mlperf/check/report.js';
import { MANIFEST_NAME } from '../mlperf/collect.js';
import type { DirFacts, RunManifest, SequenceFacts } from '../mlperf/collect.js';
import { MLPERF_OPTIONS, VALUE_FLAGS } from '../mlperf/options.js';
import { planLines, planSequence } from '../mlperf/plan.js';
import type { LaunchContext, Plan, Step } from '../mlperf/plan.js';
import { mlperfRequest } from '../mlperf/request.js';
import type { MlperfRequest } from '../mlperf/request.js';
import { summaryLines } from '../mlperf/summary-text.js';
import { fileSystemOf } from '../tiers/fs-info.js';
import { fileStamp } from '../util/dates.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { cacheDirProblems, realFs } from './cache-dir.js';
import { checkPath } from './check.js';
import { ConfigError } from './errors.js';
import { mergeAndSave } from './merge.js';
import { parseRunArgs } from './run-args.js';
import type { SignalGuard } from './signals.js';
import type { ArgsOf } from './sub-args.js';
import type { MLPERF_ARGS, MLPERF_PROBE_ARGS } from './subcommand-args.js';

const BIN = fileURLToPath(new URL('../../../bin/kv-cache.cjs', import.meta.url));

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const warn = (line: string): void => void process.stderr.write(`kv-cache mlperf: warning: ${line}\n`);

/** True when `name` is an executable file on PATH. */
export function onPath(name: string, path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function deviceOf(path: string): number | undefined {
  try {
    return statSync(path).dev;
  } catch {
    return undefined;
  }
}

export interface Checked {
  readonly problems: string[];
  readonly warnings: string[];
}

/** Everything that can be known before the first step: directories, file systems, mpirun, each trial's kv-cache flags. */
export function checkPlan(r: MlperfRequest, plan: Plan, now: Date, withCommands = true): Checked {
  const problems: string[] = [];
  const warnings: string[] = [];
  // Both must exist already: this command creates neither (nothing is created on bad input).
  if (r.resultsDir !== '') problems.push(...cacheDirProblems(r.resultsDir, realFs, false, { flag: 'results-dir', createHint: false }));
  if (r.cacheDir !== '') problems.push(...cacheDirProblems(r.cacheDir, realFs, false, { flag: 'cache-dir', createHint: false }));
  const a = deviceOf(r.resultsDir);
  const b = deviceOf(r.cacheDir);
  if (a !== undefined && a === b) {
    const why = `--cache-dir ${r.cacheDir} and --results-dir ${r.resultsDir} are on the same file system: writing results would load the storage under test`;
    if (r.division === 'closed') problems.push(`${why}; CLOSED needs them on different file systems`);
    else warnings.push(why);
  }
  if (plan.usesMpirun && !r.dryRun && !onPath('mpirun'))
    problems.push(`${plan.totalRanks} ranks need mpirun, which is not on PATH (install Open MPI: apt-get install openmpi-bin)`);
  if (r.division === 'closed' && r.skipPrecondition) problems.push('--skip-precondition is locked in CLOSED');
  // Each distinct kv-cache command is checked as kv-cache itself would (as rank 0 of 1): a bad OPEN value fails now, not an hour in.
  // (Not when the flags themselves were bad: their values would be reported twice.)
  const seen = new Set<string>();
  if (!withCommands) return { problems, warnings };
  const whose = new Map<string, string[]>(); // one line per problem, naming every command that has it
  for (const s of plan.steps) {
    if (s.kind !== 'trial' && s.kind !== 'precondition') continue;
    const kvArgs = s.argv.slice(s.argv.indexOf(BIN_MARK(s.argv)) + 1);
    const key = kvArgs.filter((x) => !x.startsWith('/')).join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    try {
      parseRunArgs(kvArgs, now, Math.random, undefined, {});
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const what = s.kind === 'trial' ? `option ${s.option}` : 'preconditioning';
      // Every command's --rank-cache-base is --cache-dir, whose problems are reported above already.
      for (const p of e.problems.filter((q) => !q.startsWith('rank-cache-base '))) whose.set(p, [...(whose.get(p) ?? []), what]);
    }
  }
  for (const [p, whats] of whose) problems.push(`${whats.join(', ')}: ${p}`);
  return { problems, warnings };
}

/** The bootstrap's path in an argv: everything after it is kv-cache's own flags. */
function BIN_MARK(argv: readonly string[]): string {
  return argv.find((x) => x.endsWith('kv-cache.cjs')) ?? BIN;
}

/** A directory's file system and device as this host sees them (for run.json: `kv-cache check` reads them). */
async function dirFacts(path: string): Promise<DirFacts> {
  const fs = await fileSystemOf(path).catch(() => undefined);
  const device = await deviceForPath(path).catch(() => undefined);
  return { path, device_id: deviceOf(path) ?? null, file_system: fs?.name ?? null, block_device: device?.name ?? null };
}

async function sequenceOf(r: MlperfRequest): Promise<SequenceFacts> {
  const overrides = Object.fromEntries(
    (Object.keys(r.overrides) as Array<keyof typeof r.overrides>).map((k) => [VALUE_FLAGS[k], r.overrides[k] ?? '']),
  );
  return {
    seed: r.seed,
    start_delay_sec: r.startDelaySec,
    end_delay_sec: r.endDelaySec,
    inter_option_delay_sec: r.interOptionDelaySec,
    config: r.config ?? null,
    preconditioned: !r.skipPrecondition,
    overrides,
    launch_host: hostname(),
    results_dir: await dirFacts(r.resultsDir),
    ...(r.cacheDir !== '' ? { cache_dir: await dirFacts(r.cacheDir) } : {}),
  };
}

function manifestOf(r: MlperfRequest, plan: Plan, now: Date, sequence: SequenceFacts): RunManifest {
  return {
    run_datetime: now.toISOString(),
    npernode: r.npernode,
    host_count: plan.hostCount,
    total_ranks: plan.totalRanks,
    trials_per_option: r.trials,
    division: r.division,
    system_name: r.systemName ?? null,
    options: [...r.options],
    hosts: r.hosts.length > 0 ? [...r.hosts] : [hostname()],
    sequence,
  };
}

/** Progress across the sequence: a bar on a terminal, plain lines elsewhere. */
class Progress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private done = 0;

  constructor(
    private readonly total: number,
    tty: boolean,
  ) {
    if (tty) {
      this.bar = new cliProgress.SingleBar(
        { format: 'MLPerf [{bar}] {value}/{total} steps | {step}', hideCursor: true, stream: process.stdout },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total, 0, { step: 'starting' });
    }
  }

  begin(what: string): void {
    if (this.bar !== undefined) this.bar.update(this.done, { step: what });
    else say(`[${this.done + 1}/${this.total}] ${what}`);
  }

  end(what: string): void {
    this.done++;
    if (this.bar !== undefined) this.bar.update(this.done, { step: what });
    else say(`[${this.done}/${this.total}] ${what}`);
  }

  stop(): void {
    this.bar?.stop();
  }
}

function describe(s: Step): string {
  switch (s.kind) {
    case 'sleep':
      return `sleep ${s.seconds} s (${s.why})`;
    case 'trial':
      return `option ${s.option} (${MLPERF_OPTIONS[s.option].name}) trial ${s.trial}`;
    default:
      return s.kind === 'probe' ? 'shared results dir probe' : 'preconditioning';
  }
}

/** Runs one command with its output in `log`; SIGINT reaches it only through `interrupt` (its own process group). */
function runChild(argv: readonly string[], log: string, interrupt: AbortSignal): Promise<number> {
  return new Promise((resolveExit) => {
    mkdirSync(resolve(log, '..'), { recursive: true });
    // The results dir may be shared: append to our log, but never through a link someone planted in its place.
    let fd: number;
    try {
      fd = openSync(log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
    } catch (e) {
      process.stderr.write(`kv-cache mlperf: error: cannot open the log ${log}: ${messageOf(e)}\n`);
      resolveExit(126);
      return;
    }
    let child: ChildProcess;
    try {
      // Detached: a terminal's Ctrl-C reaches only us, and we pass one SIGINT on (a second would make the ranks exit without saving).
      child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', fd, fd], detached: true });
    } finally {
      closeSync(fd);
    }
    const forward = (): void => void child.kill('SIGINT');
    const killOnExit = (): void => void child.kill('SIGTERM');
    interrupt.addEventListener('abort', forward, { once: true });
    process.on('exit', killOnExit);
    child.on('error', () => resolveExit(127));
    child.on('close', (code, signal) => {
      interrupt.removeEventListener('abort', forward);
      process.off('exit', killOnExit);
      resolveExit(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}

function sleepFor(seconds: number, interrupt: AbortSignal): Promise<void> {
  return realBarrierTime.sleep(seconds * 1000, interrupt).catch(() => undefined);
}

interface Outcome {
  readonly failed: string[];
  /** The sequence could not go on (probe or preconditioning failed). */
  readonly aborted: boolean;
}

async function execute(plan: Plan, r: MlperfRequest, interrupt: AbortSignal): Promise<Outcome> {
  const tty = process.stdout.isTTY && !r.noProgress;
  const progress = new Progress(plan.steps.length, tty);
  const failed: string[] = [];
  try {
    for (const s of plan.steps) {
      if (interrupt.aborted) break;
      const what = describe(s);
      progress.begin(what);
      if (s.kind === 'sleep') {
        await sleepFor(s.seconds, interrupt);
        progress.end(what);
        continue;
      }
      const log = join(s.dir, 'kv-cache.log');
      const code = await runChild(s.argv, log, interrupt);
      progress.end(`${what}: ${code === 0 ? 'done' : `exit ${code}`} (log ${log})`);
      if (code !== 0 && !interrupt.aborted) {
        failed.push(`${what} exited with ${code}; see ${log}`);
        if (s.kind !== 'trial') return { failed, aborted: true };
      }
    }
    return { failed, aborted: false };
  } finally {
    progress.stop();
  }
}

/** `--probe-dir DIR` (run by the sequence under mpirun, one rank per host): every host writes a file in DIR; rank 0 fails fast if one is missing. */
export async function probeMain(args: ArgsOf<typeof MLPERF_PROBE_ARGS>): Promise<number> {
  const dir = args.values['probe-dir'];
  const timeoutSec = args.values['barrier-timeout'];
  const found = detectRank(process.env);
  if (found.kind !== 'rank' || dir === '') throw new ConfigError(['--probe-dir DIR runs under a launcher (one rank per host)']);
  const { rank, worldSize } = found.identity;
  const barrier = new FileBarrier({
    store: new DirStore(dir, process.pid),
    rank,
    worldSize,
    host: hostname(),
    pid: process.pid,
    timeoutMs: timeoutSec * 1000,
    time: realBarrierTime,
    where: dir,
  });
  try {
    const d = await barrier.meet('probe', () => ({}));
    if (rank === 0) say(`shared results dir ${dir}: seen by every host (${d.arrivals.map((a) => a.host).join(', ')})`);
    return 0;
  } catch (e) {
    if (!(e instanceof BarrierError)) throw e;
    process.stderr.write(
      `kv-cache mlperf: error: shared results dir probe: ${e.message} — --results-dir must be one directory shared by every host\n`,
    );
    return 1;
  }
}

/** The summary of the rank files written so far, at a force-quit: one line saying where, or why not. */
function summaryAtForceQuit(plan: Plan): string[] {
  const rerun = `kv-cache merge ${plan.runDir} rebuilds it once the ranks have exited`;
  try {
    mergeAndSave([plan.runDir], plan.summaryPath, new Date());
    return [`summary of the rank files so far saved to ${plan.summaryPath}; ${rerun}`];
  } catch (e) {
    return [`summary not written (${messageOf(e)}); ${rerun}`];
  }
}

/** `kv-cache check` of the run directory as console lines; a run it cannot read is one line saying why. */
function checkLinesOf(runDir: string): string[] {
  try {
    return checkLines(checkPath(runDir, undefined));
  } catch (e) {
    if (!(e instanceof CheckInputError)) throw e;
    return [`Check not run: ${e.message}`];
  }
}

/** `args`: as declared in subcommands.ts; every problem of the request and the plan throws one ConfigError (exit 2). */
export async function mlperfMain(args: ArgsOf<typeof MLPERF_ARGS>, signals: SignalGuard): Promise<number> {
  const parsed = mlperfRequest(args);
  const r = {
    ...parsed.request,
    resultsDir: parsed.request.resultsDir && resolve(parsed.request.resultsDir),
    cacheDir: parsed.request.cacheDir && resolve(parsed.request.cacheDir),
  };
  const now = new Date();
  const ctx: LaunchContext = {
    node: process.execPath,
    bin: BIN,
    cores: availableParallelism(),
    isRoot: process.getuid?.() === 0,
    stamp: fileStamp(now),
  };
  const plan = planSequence(r, ctx);
  const planChecks = checkPlan(r, plan, now, parsed.problems.length === 0);
  const checked = { problems: [...parsed.problems, ...planChecks.problems], warnings: planChecks.warnings };
  if (checked.problems.length > 0) throw new ConfigError(checked.problems);
  for (const w of checked.warnings) warn(w);
  if (r.dryRun) {
    for (const line of planLines(plan)) say(line);
    return 0;
  }
  const interrupt = signals.begin();
  mkdirSync(plan.runDir, { recursive: true });
  const sequence = await sequenceOf(r);
  writeFileAtomically(join(plan.runDir, MANIFEST_NAME), `${JSON.stringify(manifestOf(r, plan, now, sequence), null, 2)}\n`);
  say(
    `MLPerf KV-cache ${r.division.toUpperCase()}: options ${r.options.join(', ')}, ${r.trials} trial(s) each, ${plan.totalRanks} rank(s) on ${plan.hostCount} host(s); run directory ${plan.runDir}`,
  );
  // A force-quit merges the rank files already written (a few JSON files: quick). The exit then sends the
  // child SIGTERM (runChild): a lone rank, which had our SIGINT, takes it as a force-quit of its own and
  // removes its entry files; mpirun ends its ranks.
  const stopMerging = signals.atForceQuit(() => summaryAtForceQuit(plan));
  const outcome = await execute(plan, r, interrupt).finally(stopMerging);
  let code = outcome.failed.length > 0 ? 1 : 0;
  for (const f of outcome.failed) process.stderr.write(`kv-cache mlperf: error: ${f}\n`);
  try {
    const summary = mergeAndSave([plan.runDir], plan.summaryPath, new Date());
    for (const line of summaryLines(summary, plan.summaryPath)) say(line);
  } catch (e) {
    process.stderr.write(`kv-cache mlperf: error: summary ${plan.summaryPath} not written: ${messageOf(e)}\n`);
    code = 1;
  }
  // The submission rules on what was just written, printed last; the exit code stays the sequence's own.
  for (const line of checkLinesOf(plan.runDir)) say(line);
  return signals.exitCode !== 0 ? signals.exitCode : code;
}
