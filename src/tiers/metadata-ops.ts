// The storage's metadata operations a tier performs around its data (issue 34; docs/storage-io.md#the-metadata-bill):
// what a layout costs a file system per block beyond the bytes. The tier times each call it makes
// and hands it to a sink the engine gives it (metrics/metadata-stats.ts keeps the counts and
// histograms; the tiers layer cannot depend on metrics).
//
//   create  a new file made (open with O_CREAT|O_EXCL): an entry file, a block's temporary file
//   rename  a file moved onto its final name (fan-out layout's publish)
//   link    a hard link made onto a final name (a shared pool's publish)
//   unlink  a file or object removed (eviction, a publish's temporary name, a failed write's file)
//   lookup  an existence check (lstat, HEAD) asked of the storage, found or not
//   mkdir   a directory made (the fan-out directories, each once)
import { performance } from 'node:perf_hooks';

export const METADATA_OPS = ['create', 'rename', 'link', 'unlink', 'lookup', 'mkdir'] as const;
export type MetadataOp = (typeof METADATA_OPS)[number];

/**
 * Hears of one metadata call: its class, its wall time (ms) and whether the storage did it (`ok`
 * false: it failed, and changed nothing; a lookup that finds nothing is ok: that is its answer).
 */
export type MetadataOpSink = (op: MetadataOp, ms: number, ok: boolean) => void;

/** A sink that drops everything (a tier opened without one). */
export const IGNORE_METADATA: MetadataOpSink = () => undefined;

/**
 * Runs `call` (one metadata call) and tells `sink` its time. `okWhen` decides from a rejection
 * whether the storage still answered (a lookup's ENOENT); by default a rejection is a failure.
 */
export async function metadataCall<T>(
  sink: MetadataOpSink,
  op: MetadataOp,
  call: () => Promise<T>,
  okWhen: (e: unknown) => boolean = () => false,
): Promise<T> {
  const t0 = performance.now();
  try {
    const v = await call();
    sink(op, performance.now() - t0, true);
    return v;
  } catch (e) {
    sink(op, performance.now() - t0, okWhen(e));
    throw e;
  }
}
