// Shared pieces of the trace tests: a deterministic event stream, a fake clock, temp dirs, and the
// system zstd used as the independent judge of our .zst output.
import { execFileSync } from 'node:child_process';
import { withTempDir as withDir } from '../util/temp-dir.js';
import type { TraceEvent, TraceOp, TracePhase, TraceRow, TraceTier } from '../../src/trace/format.js';
import { readTrace } from '../../src/trace/reader.js';

const OPS: readonly TraceOp[] = ['Write', 'Read', 'Delete'];
const TIERS: readonly TraceTier[] = ['gpu', 'cpu', 'storage'];
const PHASES: readonly TracePhase[] = ['Prefill', 'Decode', 'Both', 'Evict'];

/** `n` varied events; every 97th key holds a comma, a quote or a line break to exercise quoting. */
export function sampleEvents(n: number): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (let i = 0; i < n; i++) {
    const odd = i % 97 === 0 ? [',x', '"q"', 'a\nb', 'c\r\nd'][(i / 97) % 4] : '';
    events.push({
      op: OPS[i % 3] ?? 'Write',
      tier: TIERS[(i >> 2) % 3] ?? 'gpu',
      key: `user_${i % 50}_req_${String(i).padStart(4, '0')}${odd ?? ''}`,
      size: (i * 131_071) % 600_000_000,
      phase: PHASES[(i >> 1) % 4] ?? 'Prefill',
    });
  }
  return events;
}

/** A clock stepping 1.5 ms per row from a fixed epoch, so files are reproducible. */
export function steppingClock(start = 1_732_233_600.000001): () => number {
  let i = 0;
  return () => start + 0.0015 * i++;
}

export const withTempDir = <T>(fn: (dir: string) => Promise<T>): Promise<T> => withDir(fn, 'kv-trace-');

export async function collect(path: string): Promise<TraceRow[]> {
  const rows: TraceRow[] = [];
  for await (const row of readTrace(path)) rows.push(row);
  return rows;
}

/** `zstd -d -c file` as bytes. */
export function zstdDecompress(path: string): Buffer {
  return execFileSync('zstd', ['-d', '-c', '-q', '--', path], { maxBuffer: 1 << 30 });
}

/** `zstd -3 -c` of `input`, as the reference's zstandard writer would produce. */
export function zstdCompress(input: string | Buffer): Buffer {
  return execFileSync('zstd', ['-3', '-q', '-c'], { input, maxBuffer: 1 << 30 });
}
