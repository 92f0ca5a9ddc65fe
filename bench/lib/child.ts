// Child processes measured from outside: device and CPU snapshots around the child, at marker lines
// of its stdout, and every SAMPLE_MS while it runs.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { snapshot, windowBetween } from './disk-window.js';
import type { Snapshot, Window } from './disk-window.js';
import { processCpu } from './proc.js';

export const SAMPLE_MS = 200;
/** Output lines kept for an error message. */
const TAIL_LINES = 40;

/** A stdout line pattern whose first appearance is snapshotted under `name`. */
export interface Marker {
  readonly name: string;
  readonly pattern: RegExp;
}

export interface ChildRun {
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Whole child: from just before spawn to its exit. */
  readonly whole: Window;
  /** Snapshots stamped when a marker line first appeared on the child's stdout. */
  readonly marks: ReadonlyMap<string, Snapshot>;
  /** Snapshots every SAMPLE_MS while the child ran. */
  readonly samples: readonly Snapshot[];
  readonly outputTail: readonly string[];
}

/** A shell-safe rendering of one argument, for printing commands. */
export function quote(arg: string): string {
  return /^[A-Za-z0-9_./=:,@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Throws with the command and its last output lines unless the child exited 0. */
export function checkExit(run: ChildRun, what: string): void {
  if (run.exitCode === 0) return;
  throw new Error(`${what} failed (exit ${run.exitCode ?? run.signal ?? '?'}): ${run.command}\n${run.outputTail.join('\n')}`);
}

/** Runs children one at a time; an interrupt stops the running one and marks the runner interrupted. */
export class ChildRunner {
  private current: ChildProcess | undefined;
  private stopped = false;

  constructor(private readonly cwd: string) {}

  get interrupted(): boolean {
    return this.stopped;
  }

  interrupt(sig: NodeJS.Signals): void {
    this.stopped = true;
    this.current?.kill(sig);
  }

  /** Runs a command to completion, snapshotting `device` around it and at marker lines. */
  async run(
    file: string,
    args: readonly string[],
    device: string,
    markers: readonly Marker[] = [],
    /** Set in the child's environment, over this process's. */
    env?: NodeJS.ProcessEnv,
  ): Promise<ChildRun> {
    const command = [...Object.entries(env ?? {}).map(([k, v]) => `${k}=${v ?? ''}`), file, ...args].map(quote).join(' ');
    const cpuBefore = processCpu('self', true);
    const before = snapshot(device, undefined);
    const child = spawn(file, args, { cwd: this.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.current = child;
    const pid = child.pid;
    const marks = new Map<string, Snapshot>();
    const samples: Snapshot[] = [];
    const sampler = setInterval(() => samples.push(snapshot(device, pid)), SAMPLE_MS);
    const tail: string[] = [];
    const keep = (line: string): void => {
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    };
    createInterface({ input: child.stdout }).on('line', (line) => {
      for (const m of markers) if (!marks.has(m.name) && m.pattern.test(line)) marks.set(m.name, snapshot(device, pid));
      keep(line);
    });
    createInterface({ input: child.stderr }).on('line', (line) => keep(`[stderr] ${line}`));
    const [exitCode, signal] = await new Promise<[number | null, string | null]>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, sig) => resolve([code, sig]));
    });
    clearInterval(sampler);
    this.current = undefined;
    const after = snapshot(device, undefined);
    const cpuAfter = processCpu('self', true);
    // The reaped child's CPU as the kernel booked it to us: exact, unlike sampling its /proc entry.
    const childCpuSec =
      cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system : undefined;
    return { command, exitCode, signal, whole: windowBetween(before, after, childCpuSec), marks, samples, outputTail: tail };
  }
}
