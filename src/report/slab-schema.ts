// The results' `kvcache_bench.slab` block (--kv-layout slab, issue 34): the pool's shape, its lay-out
// before the measured window (timed and counted apart, like preconditioning), and the slot traffic.
import * as z from 'zod';
import type { SlabReport } from '../metrics/result.js';

const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);

export const SlabSchema = z
  .strictObject({
    slot_bytes: count('bytes of a slot (--slab-slot-mib, else a full KV block or the largest synthetic entry; a multiple of 4 KiB)'),
    slots: count('slots in the pool: the storage tier limit ÷ slot_bytes'),
    files: count('pool files (kvc-<run id>-slab-<n>.bin under the cache dir)'),
    file_bytes: count('bytes of a pool file (the last may be shorter) (bytes)'),
    pool_bytes: count('slots × slot_bytes: the storage tier limit the cache enforced (bytes)'),
    lay_out_bytes: count('bytes written to lay the pool out before the measured window: in neither storage_bytes nor device_io (bytes)'),
    lay_out_sec: z.number().nonnegative().describe('time the lay-out took: files created, written whole and synced (s)'),
    slots_used_peak: count('most slots held at once'),
    slots_freed: count('slots given back by evictions and deletes: no file was unlinked for any'),
    file_creates: count('pool files created, all during the lay-out: a stored entry creates nothing'),
    file_unlinks: count('pool files unlinked so far (at the end of the run, after the results are taken: usually 0 here)'),
    largest_refused_bytes: count('the largest entry refused for being larger than a slot (bytes)')
      .nullable()
      .describe('null when no entry was larger than a slot; else it is in refused_allocations and a warning names the flag'),
  })
  .describe(
    '--kv-layout slab: entries in fixed-size slots of pool files laid out before the window; absent for other layouts and before schema 2.7.0',
  );

export type SlabJson = z.infer<typeof SlabSchema>;

export function slabJson(s: SlabReport): SlabJson {
  return {
    slot_bytes: s.slotBytes,
    slots: s.slots,
    files: s.files,
    file_bytes: s.fileBytes,
    pool_bytes: s.poolBytes,
    lay_out_bytes: s.layOutBytes,
    lay_out_sec: s.layOutSec,
    slots_used_peak: s.slotsUsedPeak,
    slots_freed: s.slotsFreed,
    file_creates: s.fileCreates,
    file_unlinks: s.fileUnlinks,
    largest_refused_bytes: s.largestRefusedBytes,
  };
}
