// The results' `kvcache_bench.metadata_ops` block (issue 34; report/metadata-ops-json.ts builds it):
// the storage tier's metadata calls over the measured window, per class — creates, renames, links,
// unlinks, lookups, mkdirs — and in all, per second and per GiB the tier moved: what a layout costs the
// file system or object store per block beyond the bytes (docs/storage-io.md#the-metadata-bill).
import * as z from 'zod';
import { METADATA_OPS } from '../metrics/metadata-stats.js';
import type { MetadataOp } from '../metrics/metadata-stats.js';
import { count, ms } from './schema-units.js';

/** What each class is, for its description. */
const WHAT: Readonly<Record<MetadataOp, string>> = {
  create: 'files made (open with O_CREAT|O_EXCL): entry files, temporary names of blocks being published',
  rename: 'files moved onto their final names (the fan-out layout publishes a block so)',
  link: 'hard links made onto final names (a shared pool publishes a block so)',
  unlink: 'files or objects removed: evictions, temporary names once published, files of failed writes (S3: DELETE)',
  lookup: 'existence checks asked of the storage, found or not (lstat; S3: HEAD)',
  mkdir: 'directories made (the fan-out directories, each once)',
};

const perSecond = (what: string): z.ZodNumber => z.number().nonnegative().describe(`${what} ÷ measured_window_sec (ops/s)`);
const perGib = (what: string): z.ZodNullable<z.ZodNumber> =>
  z
    .number()
    .nonnegative()
    .nullable()
    .describe(`${what} ÷ GiB the storage tier read and wrote (storage_bytes; GiB = 2^30 bytes) (ops/GiB); null when it moved nothing`);

const opClass = (op: MetadataOp) =>
  z
    .strictObject({
      count: count('calls the storage carried out'),
      failed: count('calls the storage refused (they changed nothing; not in the latencies)'),
      per_second: perSecond('count'),
      per_gib_moved: perGib('count'),
      latency_ms: z
        .strictObject({
          mean: ms('mean'),
          p50: ms('50th percentile'),
          p95: ms('95th percentile'),
          p99: ms('99th percentile'),
          p999: ms('99.9th percentile'),
          max: ms('largest'),
        })
        .describe('time of one call carried out, from the call to its answer (ms; all 0 when count is 0)'),
      histogram: z.string().describe('those times as an encoded HdrHistogram (µs), for merges'),
    })
    .describe(`${op}: ${WHAT[op]}`);

const OpClasses = Object.fromEntries(METADATA_OPS.map((op) => [op, opClass(op)])) as Readonly<
  Record<MetadataOp, ReturnType<typeof opClass>>
>;

export const MetadataOpsSchema = z
  .strictObject({
    ...OpClasses,
    total: count('metadata calls carried out, every class'),
    failed: count('metadata calls refused, every class'),
    per_second: perSecond('total'),
    per_gib_moved: perGib('total'),
  })
  .describe(
    "The storage tier's metadata calls over the measured window (docs/storage-io.md#the-metadata-bill; preparation's are not counted); absent in trace mode and before schema 2.8.0",
  );

export type MetadataOpsJson = z.infer<typeof MetadataOpsSchema>;
