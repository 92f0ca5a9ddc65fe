// The storage tier's metadata operations (issue 34; kvcache_bench.metadata_ops): per run, each class it
// used — count, failures, per second, per GiB moved, latency percentiles — and their sum, so runs of
// different layouts or backends set their metadata bill side by side. Runs without the block (trace
// mode, files before schema 2.8.0) are named in a note, not drawn as zeros.
import { METADATA_OPS } from '../../../metrics/metadata-stats.js';
import type { MetadataOpsJson } from '../../metadata-ops-schema.js';
import type { LoadedRun } from '../run-input.js';
import type { Section } from './section.js';

const ms = (x: number): string => x.toFixed(3);
const perGib = (x: number | null): string => (x === null ? 'n/a' : x.toFixed(1));

/** A run's rows: one per class it used, then their sum (latencies are per class only); none when it used none. */
function rowsOf(m: MetadataOpsJson, who: readonly string[]): string[][] {
  const used = METADATA_OPS.filter((op) => m[op].count + m[op].failed > 0);
  if (used.length === 0) return [];
  const rows = used.map((op) => {
    const o = m[op];
    const l = o.latency_ms;
    const timed = o.count > 0;
    return [
      ...who,
      op,
      String(o.count),
      String(o.failed),
      o.per_second.toFixed(1),
      perGib(o.per_gib_moved),
      ...(timed ? [ms(l.p50), ms(l.p95), ms(l.p99), ms(l.p999), ms(l.max)] : ['n/a', 'n/a', 'n/a', 'n/a', 'n/a']),
    ];
  });
  rows.push([...who, 'all', String(m.total), String(m.failed), m.per_second.toFixed(1), perGib(m.per_gib_moved), '', '', '', '', '']);
  return rows;
}

export function metadataOpsSection(runs: readonly LoadedRun[]): Section {
  const withOps = runs.flatMap((r) => (r.doc.kvcache_bench.metadata_ops !== undefined ? [{ r, m: r.doc.kvcache_bench.metadata_ops }] : []));
  const several = runs.length > 1;
  const rows = withOps.flatMap(({ r, m }) => rowsOf(m, several ? [r.label] : []));
  const without = runs.filter((r) => r.doc.kvcache_bench.metadata_ops === undefined).map((r) => r.label);
  const none = withOps.filter(({ m }) => m.total + m.failed === 0).map(({ r }) => r.label);
  const notes = [
    ...(withOps.length === 0
      ? ['Metadata operations: not recorded (trace mode, or a results file before schema 2.8.0).']
      : [
          'Calls the storage tier made besides reading and writing data, over the measured window (preparation excluded); per GiB: ÷ GiB the tier read and wrote. docs/storage-io.md#the-metadata-bill says what each layout makes per block.',
        ]),
    ...(none.length > 0 ? [`No metadata call in the measured window: ${none.join(', ')} (a slab pool, the memory backend).`] : []),
    ...(withOps.length > 0 && without.length > 0 ? [`Metadata operations not recorded in ${without.join(', ')}.`] : []),
  ];
  return {
    id: 'metadata-ops',
    title: 'Metadata operations (storage tier)',
    charts: [],
    tables:
      rows.length === 0
        ? []
        : [
            {
              id: 'metadata-ops-figures',
              title: 'Creates, renames, links, unlinks, lookups and mkdirs: counts, rates and latencies (ms)',
              header: [
                ...(several ? ['run'] : []),
                'operation',
                'count',
                'failed',
                'per second',
                'per GiB moved',
                'p50',
                'p95',
                'p99',
                'p99.9',
                'max',
              ],
              rows,
            },
          ],
    notes,
  };
}
