// KV payload bytes. Every entry is a run of 4 KiB blocks taken in order from one random "source" of
// SOURCE_BYTES per run seed (an AES-256-CTR keystream), starting at a block the entry's key chooses,
// and the first 16 bytes of each block are XORed with a stamp made of the key's hash and the block's
// index. So:
// - deterministic per (seed, key) and any byte range can be produced on its own (random access);
// - no two 4 KiB blocks of a run are equal, at any dataset size: blocks from different source blocks
//   differ in their 4,080 unstamped random bytes, and two blocks from the same source block carry
//   different stamps (the same key at another index, or another key's 64-bit hash prefix) — the
//   reference's static buffer repeated up to 96.7 % of blocks (docs/reference-compat.md#rc-38);
// - incompressible: every block is keystream, and within an entry the source repeats only every
//   SOURCE_BYTES, beyond the match window of zstd's levels 1–19 (at most 8 MiB); a long-range matcher
//   (`zstd --long`) over an entry larger than SOURCE_BYTES would find that period;
// - cheap: producing a chunk is one memory copy plus 16 byte XORs per 4 KiB, several GiB/s per core,
//   where the keystream itself (Node's cipher API) made about 1.3 GB/s per core.
import { createCipheriv, createHash } from 'node:crypto';

/** Stamped block size: the granularity at which blocks are unique (dedup engines use 4 KiB or more). */
export const PAYLOAD_BLOCK = 4096;
/** Random source per seed, shared by all entries (and all generator threads). */
export const SOURCE_BYTES = 32 * 1024 * 1024;
const SOURCE_BLOCKS = SOURCE_BYTES / PAYLOAD_BLOCK;
const STAMP_BYTES = 16;
/** Bytes of entry key material: the 16-byte stamp, then 4 bytes choosing the first source block. */
export const MATERIAL_BYTES = 32;

/** Keystream is produced this many bytes at a time from a reused zero buffer (below glibc's mmap threshold). */
const KEYSTREAM_STEP = 64 * 1024;
/** Sources of the most recently used seeds; a run uses one, tests a few. */
const SOURCE_CACHE_SIZE = 2;
const sourceCache = new Map<number, Uint8Array>();

/**
 * The random source of `seed`: SOURCE_BYTES of AES-256-CTR keystream in a SharedArrayBuffer, so that
 * generator threads can share it. Made once per seed (about 0.2 s here, mostly first touch of fresh
 * memory) and cached.
 */
export function payloadSource(seed: number): Uint8Array {
  const cached = sourceCache.get(seed);
  if (cached !== undefined) {
    sourceCache.delete(seed);
    sourceCache.set(seed, cached); // most recently used last
    return cached;
  }
  const source = new Uint8Array(new SharedArrayBuffer(SOURCE_BYTES));
  const key = createHash('sha256').update(`kv-payload-source\u0000${seed}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const zeros = new Uint8Array(KEYSTREAM_STEP);
  for (let at = 0; at < SOURCE_BYTES; at += KEYSTREAM_STEP) source.set(cipher.update(zeros), at);
  sourceCache.set(seed, source);
  if (sourceCache.size > SOURCE_CACHE_SIZE) sourceCache.delete(sourceCache.keys().next().value!);
  return source;
}

/** The MATERIAL_BYTES of one entry: SHA-256 of the run seed and the key. */
export function entryKeyMaterial(seed: number, key: string): Buffer {
  return createHash('sha256').update(`kv-payload\u0000${seed}\u0000${key}`).digest();
}

function startBlockOf(material: Uint8Array): number {
  const m = material;
  const word = ((m[16] ?? 0) | ((m[17] ?? 0) << 8) | ((m[18] ?? 0) << 16) | ((m[19] ?? 0) << 24)) >>> 0;
  return word % SOURCE_BLOCKS;
}

/**
 * Fills `target` with bytes [offset, offset + target.length) of the entry whose key material is
 * `material`, from `source` (payloadSource of the run's seed). Deterministic for the same arguments.
 */
export function fillPayload(source: Uint8Array, material: Uint8Array, offset: number, target: Uint8Array): void {
  if (source.length !== SOURCE_BYTES) throw new RangeError(`payload source must be ${SOURCE_BYTES} bytes, got ${source.length}`);
  if (material.length < MATERIAL_BYTES) throw new RangeError(`entry key material must be ${MATERIAL_BYTES} bytes, got ${material.length}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`payload offset must be a non-negative integer, got ${offset}`);
  // Entry byte i is source byte (start + i) mod SOURCE_BYTES: copy in runs up to the source's end.
  let from = (startBlockOf(material) * PAYLOAD_BLOCK + (offset % SOURCE_BYTES)) % SOURCE_BYTES;
  for (let done = 0; done < target.length; from = 0) {
    const n = Math.min(target.length - done, SOURCE_BYTES - from);
    target.set(source.subarray(from, from + n), done);
    done += n;
  }
  stampBlocks(material, offset, target);
}

/** XORs each block's first 16 bytes (those inside the range) with key bytes 0–15 ^ (0⁸ ‖ le64(index)). */
function stampBlocks(material: Uint8Array, offset: number, target: Uint8Array): void {
  const end = offset + target.length;
  let block = Math.floor(offset / PAYLOAD_BLOCK);
  for (let blockStart = block * PAYLOAD_BLOCK; blockStart < end; block++, blockStart += PAYLOAD_BLOCK) {
    const lo = block >>> 0;
    const hi = Math.floor(block / 2 ** 32) >>> 0;
    const first = Math.max(0, offset - blockStart);
    const last = Math.min(STAMP_BYTES, end - blockStart);
    for (let j = first; j < last; j++) {
      const index = j < 8 ? 0 : j < 12 ? (lo >>> (8 * (j - 8))) & 0xff : (hi >>> (8 * (j - 12))) & 0xff;
      const at = blockStart + j - offset;
      target[at] = (target[at] ?? 0) ^ (material[j] ?? 0) ^ index;
    }
  }
}

/** Convenience for tests and small entries: bytes [offset, offset + size) of an entry as a fresh buffer. */
export function payloadBytes(seed: number, key: string, size: number, offset = 0): Uint8Array {
  const out = new Uint8Array(size);
  fillPayload(payloadSource(seed), entryKeyMaterial(seed, key), offset, out);
  return out;
}
