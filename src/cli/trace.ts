// `kv-cache trace --pid N | --command "…"`: the same block-layer and syscall tracing as
// --enable-latency-tracing, for any process (the reference's standalone storage_latency_stack.sh
// <process> --fio). It ends when --duration runs out, the traced process exits, or on Ctrl-C, and
// still prints the histograms; --fio also prints (or with -o writes) the distilled fio job.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { describeHistograms } from '../telemetry/capture.js';
import type { DeviceFilter } from '../metrics/trace-capture.js';
import { deviceFilterForName } from '../telemetry/device-filter.js';
import { DEFAULT_MAX_IODEPTH, distillFio } from '../telemetry/distill.js';
import { startTracingSession } from '../telemetry/session.js';
import type { TracerOptions } from '../telemetry/tracer.js';
import { deviceLatencyLines } from '../report/console-tracing.js';
import { deviceLatencyTracingJson, tracedBlockJson } from '../report/tracing-json.js';
import { monotonicClock } from '../util/clock.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { TRACE_ARGS } from './subcommand-args.js';
import type { SignalGuard } from './signals.js';

interface TraceArgs {
  readonly pid?: number;
  readonly command?: string;
  readonly device: DeviceFilter;
  readonly durationSec?: number;
  readonly fio: boolean;
  readonly output?: string;
}

/** The trace's settings from the checked arguments (as declared in subcommands.ts); a missing process or device throws a ConfigError. */
async function traceArgs(input: ArgsOf<typeof TRACE_ARGS>): Promise<TraceArgs> {
  const v = input.values;
  const problems: string[] = [];
  if (v.pid !== undefined && !processExists(v.pid)) problems.push(`--pid ${v.pid}: no such process`);
  if (v.command?.trim() === '') problems.push('--command is empty; give a command line');
  let device: DeviceFilter | undefined = { kind: 'all', reason: 'no --device given' };
  if (v.device !== undefined) {
    device = await deviceFilterForName(v.device);
    if (device === undefined) problems.push(`--device ${v.device}: no such block device (see lsblk; e.g. nvme0n1, sda2 or /dev/vda)`);
  }
  if (v.output !== undefined) problems.push(...outputProblems(v.output, '--output'));
  if (problems.length > 0 || device === undefined) throw new ConfigError(problems);
  return {
    ...(v.pid !== undefined ? { pid: v.pid } : {}),
    ...(v.command !== undefined ? { command: v.command } : {}),
    device,
    ...(v.duration !== undefined ? { durationSec: v.duration } : {}),
    fio: v.fio || v.output !== undefined,
    ...(v.output !== undefined ? { output: v.output } : {}),
  };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves when the first of: the duration, the signal, the process's exit. */
function untilEnd(args: TraceArgs, interrupt: AbortSignal, child: ChildProcess | undefined): Promise<string> {
  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    const done = (why: string): void => {
      for (const t of timers) clearInterval(t);
      resolve(why);
    };
    if (args.durationSec !== undefined) timers.push(setTimeout(() => done('duration'), args.durationSec * 1000));
    interrupt.addEventListener('abort', () => done('interrupted'), { once: true });
    if (child !== undefined) child.once('exit', () => done('the command exited'));
    else if (args.pid !== undefined) {
      const pid = args.pid;
      timers.push(setInterval(() => (processExists(pid) ? undefined : done('the process exited')), 200));
    }
  });
}

/** A missing process, device or unusable output throws a ConfigError (exit 2) before anything starts. */
export async function traceMain(
  input: ArgsOf<typeof TRACE_ARGS>,
  version: string,
  signals: SignalGuard,
  tracer: Omit<TracerOptions, 'clock'> = {},
): Promise<number> {
  const args = await traceArgs(input);
  const interrupt = signals.begin();
  // A command starts stopped behind a shell that waits for its go (a line on stdin), so that its first I/O is traced.
  const child =
    args.command !== undefined
      ? spawn('sh', ['-c', `read _go; exec ${args.command}`], { stdio: ['pipe', 'inherit', 'inherit'] })
      : undefined;
  // A force-quit leaves nothing running that this command started: the traced command here, bpftrace in the tracer.
  signals.atForceQuit(() => {
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return [];
    child.kill('SIGTERM');
    return [`stopped the traced command (pid ${child.pid})`];
  });
  const pid = args.pid ?? child?.pid;
  if (pid === undefined) {
    process.stderr.write('kv-cache trace: error: the command could not be started\n');
    return 1;
  }
  const session = await startTracingSession(
    { device: args.device, pid, syscalls: 'all' },
    { atForceQuit: (step) => signals.atForceQuit(step), ...tracer, clock: monotonicClock },
  );
  for (const line of session.lines) process.stdout.write(`${line}\n`);
  // Without tracing the command must not run at all (its I/O would go untraced): it is stopped below, still waiting.
  if (session.active) child?.stdin?.end('go\n');
  const outcome = session.active ? await untilEnd(args, interrupt, child) : undefined;
  const result = await session.stop();
  if (result.capture === undefined) {
    child?.kill('SIGTERM');
    process.stderr.write(`kv-cache trace: error: ${result.failure ?? 'no capture'}\n`);
    return 1;
  }
  for (const w of session.warnings) process.stderr.write(`kv-cache trace: warning: ${w}\n`);
  const c = result.capture;
  const job = distillFio({
    capture: c,
    maxIodepth: DEFAULT_MAX_IODEPTH,
    jobName: `${args.command !== undefined ? 'command' : `pid_${pid}`}_workload`,
    about: [
      `fio job distilled by kvcache-bench ${version} (kv-cache trace) of ${args.command ?? `process ${pid}`}, ended by ${outcome ?? 'stop'}`,
    ],
  });
  const lines = deviceLatencyLines(deviceLatencyTracingJson(describeHistograms(c)), tracedBlockJson(c, job, {}));
  process.stdout.write(`${lines.join('\n')}\n`);
  if (args.fio && args.output === undefined) process.stdout.write(`\n${job.ini}`);
  if (args.output !== undefined) {
    try {
      writeFileAtomically(args.output, job.ini);
      process.stdout.write(`fio job saved to ${args.output}\n`);
    } catch (e) {
      process.stderr.write(`kv-cache trace: error: ${args.output} not written: ${messageOf(e)}\n`);
      return 1;
    }
  }
  return signals.exitCode;
}
