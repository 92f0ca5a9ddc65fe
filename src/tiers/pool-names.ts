// Names of a shared KV pool's blocks (--kv-pool shared; docs/shared-pool.md#naming). A block's name
// comes from its key alone plus what makes KV of two runs incompatible (the model, tokens per block,
// bytes per token), so it is the same on every rank, host and run, and blocks of another model or
// block size never collide. Names fan out over two levels of hex directories, as llm-d's file-system
// backend does (`<3 hex>/<2 hex>/<hash>.bin`), so no directory holds millions of entries. The same
// names are the object keys on an object store.
//
// A writer publishes a block atomically: it writes `<name>.tmp-<run id>-<n>` beside the final name
// and then links (files) or conditionally puts (objects) it into place, so a reader never sees half
// of a block. A temporary name left behind is a killed writer's: reported, and removed on request.
import { createHash, hash } from 'node:crypto';

/** What makes two runs' KV blocks interchangeable: equal identities share a namespace. */
export interface PoolIdentity {
  /** The model's key (the model table's name). */
  readonly model: string;
  readonly blockTokens: number;
  /** KV bytes of one token on this rank (after tensor parallelism). */
  readonly bytesPerToken: number;
}

/** Layout version: bumped if names ever change, so an old pool is never misread. */
const POOL_LAYOUT = 'kvpool-v1';

/** `kvpool-<16 hex>`: the directory (or key prefix) of one identity's blocks. */
export function poolNamespace(id: PoolIdentity): string {
  const text = JSON.stringify([POOL_LAYOUT, id.model, id.blockTokens, id.bytesPerToken]);
  return `kvpool-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** Hex digits of a block's name (160 bits: no collision among any number of blocks a pool could hold). */
const NAME_HEX = 40;

/** `<namespace>/<3 hex>/<2 hex>/<40 hex>.bin`, relative to the pool's root. */
export function poolBlockName(namespace: string, key: string): string {
  // One-shot hash() of the joined text: the same digest as update() by parts, half the time (once per block write).
  const h = hash('sha256', `${namespace}\n${key}`, 'hex').slice(0, NAME_HEX);
  return `${namespace}/${h.slice(0, 3)}/${h.slice(3, 5)}/${h}.bin`;
}

/** A published block's file name (last path part). */
export const POOL_BLOCK_FILE = /^[0-9a-f]{40}\.bin$/;
/** A temporary file name of a block being published (last path part); group 1 is the writer's run id. */
export const POOL_TEMP_FILE = /^[0-9a-f]{40}\.bin\.tmp-([0-9a-f]{8})-[0-9]+$/;
/**
 * A metadata calibration's file at a fan-out path after a run's window (engine/metadata-calibration.ts):
 * a block's name, then `.kvc-cal-<calibration id>-<round>-<i>`, and `.tmp` before its rename. Never
 * read as a block; a killed calibration's files are counted with the stale temporary files.
 */
export const POOL_CALIBRATION_FILE = /^[0-9a-f]{40}\.bin\.kvc-cal-[0-9a-f]{8}-\d+-\d+(?:\.tmp)?$/;

/** The `i`-th file of a calibration round tagged `tag` (file-names.ts calibrationTag) in `namespace`, at a fan-out path. */
export function poolCalibrationName(namespace: string, tag: string, i: number): string {
  return `${poolBlockName(namespace, `${tag}\n${i}`)}.${tag}-${i}`;
}

/** A fan-out directory's name at level 1 (3 hex) and 2 (2 hex). */
export const FANOUT_DIR = [/^[0-9a-f]{3}$/, /^[0-9a-f]{2}$/] as const;
/** A level-2 fan-out directory's path ends so: `/<3 hex>/<2 hex>`. */
const FANOUT_LEAF_END = /\/([0-9a-f]{3})\/([0-9a-f]{2})$/;

/**
 * Which of a namespace's fan-out directories (4,096 at level 1, 256 under each) a backend has made or
 * checked: two bitmaps of 128.5 KiB in all, where a set of their paths grew to a million strings
 * (~100 MiB) on a long run, since nearly every new block of a fan-out layout has a directory of its own.
 */
export class FanoutDirsMade {
  private readonly upper = new Uint8Array(4096 / 8);
  private readonly leaves = new Uint8Array((4096 * 256) / 8);

  /** The number (0 … 2^20 − 1) of the level-2 directory `dir` (a path ending `/<3 hex>/<2 hex>`). */
  static leafOf(dir: string): number {
    const m = FANOUT_LEAF_END.exec(dir);
    if (m === null) throw new RangeError(`'${dir}' is not a fan-out directory (…/<3 hex>/<2 hex>)`);
    return Number.parseInt(m[1] ?? '', 16) * 256 + Number.parseInt(m[2] ?? '', 16);
  }

  hasLeaf(leaf: number): boolean {
    return bit(this.leaves, leaf);
  }
  /** Whether the level-1 directory above leaf number `leaf` is made. */
  hasUpper(leaf: number): boolean {
    return bit(this.upper, leaf >>> 8);
  }
  addLeaf(leaf: number): void {
    setBit(this.leaves, leaf);
  }
  addUpper(leaf: number): void {
    setBit(this.upper, leaf >>> 8);
  }
}

const bit = (bits: Uint8Array, i: number): boolean => (((bits[i >>> 3] ?? 0) >>> (i & 7)) & 1) === 1;
const setBit = (bits: Uint8Array, i: number): void => {
  bits[i >>> 3] = (bits[i >>> 3] ?? 0) | (1 << (i & 7));
};

/** The temporary name the `n`-th publish of run `runId` writes before it links `final` into place. */
export function poolTempName(final: string, runId: string, n: number): string {
  return `${final}.tmp-${runId}-${n}`;
}

/** --kv-layout fanout's private namespace of run `runId` (one file per entry, fan-out names, nobody else's). */
export function fanoutNamespace(runId: string): string {
  return `kvfan-${runId}`;
}
/** A private fan-out namespace's directory name; group 1 is its run id. */
export const FANOUT_NAMESPACE = /^kvfan-([0-9a-f]{8})$/;

/** Who published a block a lookup found: this rank, another rank of this run, or a run before it. */
export const POOL_ORIGINS = ['own', 'other_rank', 'earlier_run'] as const;
export type PoolOrigin = (typeof POOL_ORIGINS)[number];
