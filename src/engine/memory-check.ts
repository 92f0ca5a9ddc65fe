// The memory-safety check (docs/reference-compat.md#rc-49), for this implementation's memory model. The reference guessed
// 2 × an 8,000-token entry per thread; here entries stream through fixed buffers, so what grows with
// the configuration is the CPU tier (it holds real bytes in this process) plus the buffer pools.
// A CPU tier that cannot fit is capped (and said so) rather than left to crash the run half-way.
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import { GiB } from '../util/units.js';

/** Node, V8 heaps, histograms and metadata: what a run needs besides tiers and buffers. */
export const RUNTIME_BASELINE_BYTES = 0.5 * GiB;
/** Share of available memory the run may plan to use. */
export const SAFE_FRACTION = 0.85;

export interface MemoryPlan {
  readonly availableBytes: number;
  readonly bufferBytes: number;
  readonly requestedCpuBytes: number;
  /** The CPU tier limit to use: the request, or less when it would not fit. */
  readonly cpuLimitBytes: number;
  readonly estimatedPeakBytes: number;
  readonly ok: boolean;
  readonly lines: readonly string[];
}

/** MemAvailable from /proc/meminfo, else the OS's free memory figure. */
export function availableMemoryBytes(meminfo = '/proc/meminfo'): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync(meminfo, 'utf8'));
    if (m?.[1] !== undefined) return Number(m[1]) * 1024;
  } catch {
    // not Linux: fall through
  }
  return freemem();
}

export function planMemory(requestedCpuBytes: number, bufferBytes: number, availableBytes: number): MemoryPlan {
  const budget = Math.max(0, availableBytes * SAFE_FRACTION - RUNTIME_BASELINE_BYTES - bufferBytes);
  const cpuLimitBytes = Math.min(requestedCpuBytes, Math.floor(budget));
  const estimatedPeakBytes = RUNTIME_BASELINE_BYTES + bufferBytes + requestedCpuBytes;
  const ok = cpuLimitBytes === requestedCpuBytes;
  const g = (b: number): string => `${(b / GiB).toFixed(2)} GiB`;
  const lines = [
    `Available memory: ${g(availableBytes)}; I/O and payload buffers: ${g(bufferBytes)}; runtime: ${g(RUNTIME_BASELINE_BYTES)}`,
    `CPU tier (holds real bytes in this process): ${g(requestedCpuBytes)} requested; estimated peak ${g(estimatedPeakBytes)}`,
    ok
      ? 'Status: OK'
      : `WARNING: the CPU tier does not fit in ${Math.round(SAFE_FRACTION * 100)} % of available memory; it is capped at ${g(cpuLimitBytes)} for this run. ` +
        `To choose yourself, pass --cpu-mem-gb ${Math.max(0, Math.floor((cpuLimitBytes / GiB) * 10) / 10)} or less.`,
  ];
  return { availableBytes, bufferBytes, requestedCpuBytes, cpuLimitBytes, estimatedPeakBytes, ok, lines };
}
