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
import { parseSubcommandArgs } from './sub-args.js';
import type { SignalGuard } from './signals.js';

export const TRACE_HELP = `Usage: kv-cache trace (--pid N | --command "CMD") [--device DEV] [--duration S] [--fio] [-o FILE]

Traces a process with bpftrace (root): block requests (of DEV, a disk or partition name such as
nvme0n1 or /dev/sda2, else every device) and the process's read/write/fsync system calls. Ends after
--duration seconds, when the process exits, or on Ctrl-C, and prints the 15 histograms.
  --pid N            an existing process (its thread group)
  --command "CMD"    run CMD with sh -c and trace it until it exits
  --device DEV       filter block probes on DEV's disk (default: every device)
  --duration S       stop after S seconds
  --fio              also print the distilled fio job
  -o, --output FILE  write the fio job to FILE (implies --fio)`;

interface TraceArgs {
  readonly pid?: number;
  readonly command?: string;
  readonly device: DeviceFilter;
  readonly durationSec?: number;
  readonly fio: boolean;
  readonly output?: string;
}

async function parseTraceArgs(argv: readonly string[]): Promise<TraceArgs> {
  const parsed = parseSubcommandArgs(
    argv,
    {
      pid: { type: 'string' },
      command: { type: 'string' },
      device: { type: 'string' },
      duration: { type: 'string' },
      fio: { type: 'boolean' },
      output: { type: 'string', short: 'o' },
    },
    'trace',
    false,
  );
  const v = parsed.values;
  const problems: string[] = [];
  if ((v.pid === undefined) === (v.command === undefined)) problems.push('give exactly one of --pid N or --command "CMD"');
  let pid: number | undefined;
  if (v.pid !== undefined) {
    pid = Number(v.pid);
    if (!Number.isSafeInteger(pid) || pid < 1) problems.push(`--pid expects a process id, got '${v.pid}'`);
    else if (!processExists(pid)) problems.push(`--pid ${pid}: no such process`);
  }
  if (v.command?.trim() === '') problems.push('--command is empty; give a command line');
  let durationSec: number | undefined;
  if (v.duration !== undefined) {
    durationSec = Number(v.duration);
    if (!Number.isFinite(durationSec) || durationSec <= 0) problems.push(`--duration expects seconds > 0, got '${v.duration}'`);
  }
  let device: DeviceFilter | undefined = { kind: 'all', reason: 'no --device given' };
  if (v.device !== undefined) {
    device = await deviceFilterForName(v.device);
    if (device === undefined) problems.push(`--device ${v.device}: no such block device (see lsblk; e.g. nvme0n1, sda2 or /dev/vda)`);
  }
  if (v.output !== undefined) problems.push(...outputProblems(v.output, '--output'));
  if (problems.length > 0 || device === undefined) throw new ConfigError(problems);
  return {
    ...(pid !== undefined ? { pid } : {}),
    ...(v.command !== undefined ? { command: v.command } : {}),
    device,
    ...(durationSec !== undefined ? { durationSec } : {}),
    fio: v.fio === true || v.output !== undefined,
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

export async function traceMain(
  argv: readonly string[],
  version: string,
  signals: SignalGuard,
  tracer: Omit<TracerOptions, 'clock'> = {},
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${TRACE_HELP}\n`);
    return 0;
  }
  let args: TraceArgs;
  try {
    args = await parseTraceArgs(argv);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`kv-cache trace: error: ${e.message}\n`);
    return 2;
  }
  const interrupt = signals.begin();
  // A command starts stopped behind a shell that waits for its go (a line on stdin), so that its first I/O is traced.
  const child =
    args.command !== undefined
      ? spawn('sh', ['-c', `read _go; exec ${args.command}`], { stdio: ['pipe', 'inherit', 'inherit'] })
      : undefined;
  const pid = args.pid ?? child?.pid;
  if (pid === undefined) {
    process.stderr.write('kv-cache trace: error: the command could not be started\n');
    return 1;
  }
  const session = await startTracingSession({ device: args.device, pid, syscalls: 'all' }, { ...tracer, clock: monotonicClock });
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
  const lines = deviceLatencyLines(deviceLatencyTracingJson(describeHistograms(c)), tracedBlockJson(c, job));
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
