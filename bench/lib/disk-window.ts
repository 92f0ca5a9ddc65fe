// Measurement windows: device counters (/proc/diskstats), machine CPU and a child's CPU read at one
// instant, and what happened between two such snapshots.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { diskDelta, parseDiskStats } from '../../src/metrics/diskstats.js';
import type { DiskCounters, DiskDelta } from '../../src/metrics/diskstats.js';
import { machineCpu, processCpu } from './proc.js';
import type { CpuSeconds, MachineCpu } from './proc.js';

export type Direction = 'write' | 'read';

function diskNow(device: string): DiskCounters {
  const row = parseDiskStats(readFileSync('/proc/diskstats', 'utf8')).find((r) => r.name === device);
  if (row === undefined) throw new Error(`no block device '${device}' in /proc/diskstats`);
  return row;
}

/** Everything read at one instant (synchronously, so a stdout marker is stamped where it arrives). */
export interface Snapshot {
  readonly t: number;
  readonly disk: DiskCounters;
  readonly machine: MachineCpu;
  readonly childCpu: CpuSeconds | undefined;
}

export function snapshot(device: string, pid: number | undefined): Snapshot {
  return {
    t: performance.now(),
    disk: diskNow(device),
    machine: machineCpu(),
    childCpu: pid === undefined ? undefined : processCpu(pid, false),
  };
}

/** What happened between two snapshots. */
export interface Window {
  readonly seconds: number;
  readonly disk: DiskDelta;
  readonly machineBusyPct: number;
  readonly machineIowaitPct: number;
  /** CPU seconds of the child over the window, when known. */
  readonly childCpuSec: number | undefined;
}

export function windowBetween(a: Snapshot, b: Snapshot, childCpuSec?: number): Window {
  const total = b.machine.total - a.machine.total;
  const own =
    a.childCpu !== undefined && b.childCpu !== undefined
      ? b.childCpu.user + b.childCpu.system - a.childCpu.user - a.childCpu.system
      : undefined;
  return {
    seconds: (b.t - a.t) / 1000,
    disk: diskDelta(a.disk, b.disk),
    machineBusyPct: total > 0 ? (100 * (b.machine.busy - a.machine.busy)) / total : 0,
    machineIowaitPct: total > 0 ? (100 * (b.machine.iowait - a.machine.iowait)) / total : 0,
    childCpuSec: childCpuSec ?? own,
  };
}

/** The snapshot taken nearest to time `t`. */
export function closest(samples: readonly Snapshot[], t: number): Snapshot | undefined {
  let best: Snapshot | undefined;
  for (const s of samples) if (best === undefined || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s;
  return best;
}

/** One direction's bytes, operations and device milliseconds of a delta. */
export function pickBytes(d: DiskDelta, w: Direction): { bytes: number; ops: number; ms: number } {
  return w === 'write' ? { bytes: d.writeBytes, ops: d.writeOps, ms: d.writeMs } : { bytes: d.readBytes, ops: d.readOps, ms: d.readMs };
}
