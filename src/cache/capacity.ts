// Tier capacities in bytes (docs/reference-compat.md#rc-9).
import { statfs } from 'node:fs/promises';
import { gibToBytes } from '../util/units.js';

/** Share of the file system's free space the storage tier may use when no capacity is given. */
export const AUTO_STORAGE_FRACTION = 0.95;

/**
 * The storage tier's limit: `capacityGiB` × 2^30 when positive, else 95 % of the space available to
 * unprivileged users on the file system holding `dir` at start, else unlimited.
 */
export async function storageLimitBytes(capacityGiB: number, dir: string | undefined): Promise<number> {
  if (capacityGiB > 0) return gibToBytes(capacityGiB);
  if (dir === undefined) return Infinity;
  try {
    const s = await statfs(dir);
    return Math.floor(s.bavail * s.bsize * AUTO_STORAGE_FRACTION);
  } catch {
    return Infinity;
  }
}
