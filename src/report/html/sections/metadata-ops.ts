// The storage tier's metadata operations (issue 34; kvcache_bench.metadata_ops): per run, each class it
// used — count, failures, per second, per GiB moved, latency percentiles — and their sum, so runs of
// different layouts or backends set their metadata bill side by side. Beside them, what those files
// cost the device (kvcache_bench.metadata_calibration): the file system's bytes per new file before and
// after the window, what the verdict allowed and for how many files. Runs without a block (trace mode,
// slab, files before schema 2.8.0) are named in a note, not drawn as zeros.
import { METADATA_OPS } from '../../../metrics/metadata-stats.js';
import { MiB } from '../../../util/units.js';
import { verdictBytesPerNewFile } from '../../metadata-allowance.js';
import type { MetadataCalibrationJson } from '../../metadata-calibration-schema.js';
import type { MetadataOpsJson } from '../../metadata-ops-schema.js';
import type { LoadedRun } from '../run-input.js';
import type { Section, TableSpec } from './section.js';

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

const kib = (bytes: number): string => (bytes / 1024).toFixed(1);

/** After the window: its figure, or why there is none (null: not made, the log says why; absent: a file before 2.10.0). */
function afterWindow(c: MetadataCalibrationJson): string {
  const a = c.after_window;
  if (a === undefined) return 'not in this file (before 2.10.0)';
  if (a === null) return 'not made';
  return a.disturbed ? `${kib(a.bytes_per_new_file)} (disturbed: not used)` : kib(a.bytes_per_new_file);
}

/** The most the verdict allowed on the device for metadata: none when disturbed, n/a when the files were not counted. */
function allowedMib(c: MetadataCalibrationJson): string {
  if (c.expected_write_bytes !== null) return (c.expected_write_bytes / MiB).toFixed(2);
  return c.disturbed ? 'none (disturbed)' : 'n/a (files not counted)';
}

/** One row per run with a calibration; the notes name the runs without one and the directories of files before 2.10.0. */
function calibrationPart(runs: readonly LoadedRun[], several: boolean): { tables: TableSpec[]; notes: string[] } {
  const withCal = runs.flatMap((r) => {
    const c = r.doc.kvcache_bench.metadata_calibration;
    return c !== undefined ? [{ r, c }] : [];
  });
  if (withCal.length === 0)
    return {
      tables: [],
      notes: [
        'File-system metadata calibration: not recorded (made for the flat and fanout layouts on a block device, by files of schema 2.8.0 or later).',
      ],
    };
  const without = runs.filter((r) => r.doc.kvcache_bench.metadata_calibration === undefined).map((r) => r.label);
  const dirs = withCal.flatMap(({ r, c }) =>
    c.bytes_per_new_dir !== null
      ? [
          `${r.label}: also ${kib(c.bytes_per_new_dir)} KiB per new directory × ${c.new_dirs_in_window ?? 'uncounted'} directories (before 2.10.0), within its allowed bytes.`,
        ]
      : [],
  );
  const rows = withCal.map(({ r, c }) => [
    ...(several ? [r.label] : []),
    c.layout,
    kib(c.bytes_per_new_file),
    afterWindow(c),
    kib(verdictBytesPerNewFile(c)),
    c.new_files_in_window === null ? 'not counted' : String(c.new_files_in_window),
    allowedMib(c),
    c.disturbed ? 'yes' : 'no',
  ]);
  return {
    tables: [
      {
        id: 'metadata-calibration',
        title: "The file system's own writes per new file, calibrated (KiB = 2^10 bytes, MiB = 2^20 bytes)",
        header: [
          ...(several ? ['run'] : []),
          'layout',
          'per new file before the window (KiB)',
          'per new file after the window (KiB)',
          'allowed per new file by the verdict (KiB)',
          'new files in the window',
          'metadata allowed on the device (MiB)',
          'disturbed',
        ],
        rows,
      },
    ],
    notes: [
      "Metadata calibration: the device's written bytes beyond the files' data per new file, before the window and among the run's entries after it; the verdict allows the larger (nothing when disturbed: another writer was busy) times the files created in the window beside the tool's bytes. docs/storage-io.md#what-the-device-writes-besides-the-blocks.",
      ...dirs,
      ...(without.length > 0 ? [`Metadata calibration not recorded in ${without.join(', ')}.`] : []),
    ],
  };
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
  const calibration = calibrationPart(runs, several);
  return {
    id: 'metadata-ops',
    title: 'Metadata operations (storage tier)',
    charts: [],
    tables: [
      ...(rows.length === 0
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
          ]),
      ...calibration.tables,
    ],
    notes: [...notes, ...calibration.notes],
  };
}
