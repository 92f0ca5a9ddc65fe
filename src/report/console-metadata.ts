// The console's METADATA OPERATIONS section (issue 34): the storage tier's creates, renames, links,
// unlinks, lookups and mkdirs over the measured window, one line per class the run used, then their
// sum per GiB moved. Nothing when the storage made no metadata call (a slab pool, the memory backend).
// Pure: lines from the results document.
import { METADATA_OPS } from '../metrics/metadata-stats.js';
import type { MetadataOpsJson } from './metadata-ops-schema.js';

const ms = (x: number): string => x.toFixed(3);

export function metadataOpsLines(m: MetadataOpsJson | undefined): string[] {
  if (m === undefined) return [];
  const used = METADATA_OPS.filter((op) => m[op].count + m[op].failed > 0);
  if (used.length === 0) return [];
  const width = Math.max(...used.map((op) => op.length));
  const lines = ['', '### METADATA OPERATIONS (storage tier; ms) ###'];
  for (const op of used) {
    const o = m[op];
    const l = o.latency_ms;
    const failed = o.failed > 0 ? `  (${o.failed} failed)` : '';
    lines.push(
      `  ${`${op}:`.padEnd(width + 1)} ${o.count} (${o.per_second.toFixed(1)}/s)  p50 ${ms(l.p50)}  p95 ${ms(l.p95)}  p99 ${ms(l.p99)}${failed}`,
    );
  }
  const all = `${m.total} in all, ${m.per_second.toFixed(1)}/s`;
  if (m.per_gib_moved === null) lines.push(`  per GiB moved: n/a (the storage tier moved nothing); ${all}`);
  else {
    const each = used.map((op) => `${op} ${(m[op].per_gib_moved ?? 0).toFixed(1)}`).join(', ');
    lines.push(`  per GiB moved: ${m.per_gib_moved.toFixed(1)} (${each}); ${all}`);
  }
  return lines;
}

/** The replay summary's one line: each class used with its count and p95, and the sum per GiB moved. */
export function metadataOpsLine(m: MetadataOpsJson | undefined): string[] {
  if (m === undefined) return [];
  const used = METADATA_OPS.filter((op) => m[op].count + m[op].failed > 0);
  if (used.length === 0) return [];
  const each = used.map((op) => `${op} ${m[op].count} (p95 ${ms(m[op].latency_ms.p95)} ms)`).join(', ');
  return [`Metadata calls: ${each}; ${m.per_gib_moved === null ? 'n/a' : m.per_gib_moved.toFixed(1)} per GiB moved`];
}
