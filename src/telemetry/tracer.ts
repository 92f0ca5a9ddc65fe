// Runs bpftrace: start it, wait until its probes are attached (our BEGIN probe prints a marker, which
// bpftrace fires only after every other probe is attached), stop it with SIGINT, collect what it
// printed. Every way it can fail — not root, no bpftrace, no tracefs, an attach error, a hang —
// becomes ONE message naming the cause and the fix; the caller decides that the run goes on.
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import type { Clock } from '../util/clock.js';

export const READY_MARKER = 'KVCACHE_BENCH_TRACING_READY';

export interface TracerOptions {
  /** The bpftrace executable (tests point it at a missing path to exercise the fallback). */
  readonly bpftrace?: string;
  /** Whether this process may load BPF programs; default: effective uid 0. */
  readonly isRoot?: () => boolean;
  /** tracefs mount points tried, in order. */
  readonly tracefsDirs?: readonly string[];
  readonly attachTimeoutMs?: number;
  readonly stopTimeoutMs?: number;
  readonly clock: Clock;
  /**
   * Registers a step a force-quit runs (the CLI's SignalGuard.atForceQuit; returns its removal): bpftrace
   * is this process's child and would outlive it, attached (issue 35). Absent: nothing registered.
   */
  readonly atForceQuit?: (step: () => readonly string[]) => () => void;
}

export interface TraceStopped {
  readonly output: string;
  /** Seconds from attached (or the last restartWindow) to the stop signal. */
  readonly windowSec: number;
  /** bpftrace did not exit in time after SIGINT and was killed: its output may be incomplete. */
  readonly killed: boolean;
}

export interface RunningTrace {
  /** The window (for rates) starts now, not at attach: what was traced before still counts. */
  restartWindow(): void;
  stop(): Promise<TraceStopped>;
}

export type TraceStart = { readonly ok: true; readonly trace: RunningTrace } | { readonly ok: false; readonly message: string };

const DEFAULT_TRACEFS = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/** tracefs usable, mounting it at /sys/kernel/tracing when it is not (root only); the failure message otherwise. */
async function ensureTracefs(dirs: readonly string[]): Promise<string | undefined> {
  for (const d of dirs) if (await exists(`${d}/events`)) return undefined;
  const first = dirs[0] ?? '/sys/kernel/tracing';
  await new Promise<void>((resolve) => {
    execFile('mount', ['-t', 'tracefs', 'nodev', first], () => resolve());
  });
  if (await exists(`${first}/events`)) return undefined;
  return `tracefs is not mounted and could not be mounted at ${first} (fix: mount -t tracefs nodev ${first})`;
}

/** bpftrace's first ERROR line, without the RLIMIT_MEMLOCK notice it prints although it works. */
export function firstError(stderr: string): string | undefined {
  return stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.includes('ERROR') && !l.includes('RLIMIT_MEMLOCK'));
}

/** Starts bpftrace on `program`; resolves once it is attached, or with the reason it could not be. */
export async function startTrace(program: string, o: TracerOptions): Promise<TraceStart> {
  const isRoot = o.isRoot ?? ((): boolean => process.geteuid?.() === 0);
  if (!isRoot()) return { ok: false, message: 'block-layer tracing needs root (fix: run kv-cache as root, e.g. with sudo)' };
  const tracefs = await ensureTracefs(o.tracefsDirs ?? DEFAULT_TRACEFS);
  if (tracefs !== undefined) return { ok: false, message: tracefs };
  const exe = o.bpftrace ?? 'bpftrace';
  const withMarker = `BEGIN { printf("${READY_MARKER}\\n"); }\n${program}`;
  // -B line: line-buffered stdout, so the marker arrives while bpftrace runs. More map entries than
  // bpftrace's default 4096: a request merged after its insert leaves its key behind.
  const child = spawn(exe, ['-B', 'line', '-e', withMarker], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BPFTRACE_MAP_KEYS_MAX: '65536' },
  });
  // From the spawn on, until it has exited: a force-quit (even while the probes attach) kills it, synchronously.
  const forgetAtForceQuit = o.atForceQuit?.(() => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return [];
    child.kill('SIGKILL');
    return [`stopped bpftrace (pid ${child.pid})`];
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: NodeJS.ErrnoException }>((resolve) => {
    child.on('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  void exited.then(() => forgetAtForceQuit?.());
  const attached = new Promise<boolean>((resolve) => {
    const check = (): void => {
      if (stdout.includes(READY_MARKER)) resolve(true);
    };
    child.stdout.on('data', check);
    void exited.then(() => resolve(false));
  });
  const timeoutMs = o.attachTimeoutMs ?? 30_000;
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
  const outcome = await Promise.race([attached, timer]);
  if (outcome !== true) {
    if (outcome === 'timeout') child.kill('SIGKILL');
    const end = await exited;
    if (end.error?.code === 'ENOENT')
      return { ok: false, message: `${exe} not found (fix: install bpftrace, e.g. apt-get install bpftrace)` };
    if (end.error !== undefined) return { ok: false, message: `${exe} could not be started: ${end.error.message}` };
    if (outcome === 'timeout') return { ok: false, message: `bpftrace did not attach its probes within ${timeoutMs / 1000} s` };
    const why = firstError(stderr) ?? `it exited with ${end.code ?? end.signal ?? 'no status'}`;
    return { ok: false, message: `bpftrace could not attach its probes: ${why} (fix: a kernel with BTF and block/syscalls tracepoints)` };
  }
  let startedAt = o.clock.now();
  return {
    ok: true,
    trace: {
      restartWindow() {
        startedAt = o.clock.now();
      },
      async stop(): Promise<TraceStopped> {
        const windowSec = (o.clock.now() - startedAt) / 1000;
        child.kill('SIGINT');
        let killed = false;
        // As long as attaching may take: on the loaded 2-core CI VM bpftrace once needed over 10 s to detach
        // its probes and print its maps, was killed, and the run lost every histogram.
        const stopMs = o.stopTimeoutMs ?? 30_000;
        const guard = setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, stopMs);
        await exited;
        clearTimeout(guard);
        const output = stdout.slice(stdout.indexOf(READY_MARKER) + READY_MARKER.length);
        return { output, windowSec, killed };
      },
    },
  };
}
