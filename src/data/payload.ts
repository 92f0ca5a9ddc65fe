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
/** AES block: the unit of the CTR counter. */
const AES_BLOCK = 16;

function sourceKey(seed: number): Buffer {
  return createHash('sha256').update(`kv-payload-source\u0000${seed}`).digest();
}

/**
 * Writes keystream bytes [from, from + target.length) of `key` into `target`. CTR mode gives random
 * access: the keystream of block n is the cipher of the counter n, so a range starts from its block.
 */
function keystreamInto(key: Buffer, from: number, target: Uint8Array): void {
  const counter = Buffer.alloc(AES_BLOCK);
  counter.writeUInt32BE(Math.floor(from / AES_BLOCK), AES_BLOCK - 4); // SOURCE_BYTES / 16 < 2^32
  const cipher = createCipheriv('aes-256-ctr', key, counter);
  const zeros = new Uint8Array(Math.min(KEYSTREAM_STEP, Math.max(AES_BLOCK, target.length)));
  cipher.update(zeros.subarray(0, from % AES_BLOCK)); // the part of the first block before `from`
  for (let at = 0; at < target.length; at += KEYSTREAM_STEP) {
    target.set(cipher.update(zeros.subarray(0, Math.min(KEYSTREAM_STEP, target.length - at))), at);
  }
}

/**
 * The random source of `seed`: SOURCE_BYTES of AES-256-CTR keystream in a SharedArrayBuffer, so that
 * generator threads can share it. Made afresh on each call (about 0.1–0.2 s here, mostly first touch
 * of fresh memory): whoever generates many entries holds it (a PayloadPool, an InlinePayloadFactory).
 */
export function payloadSource(seed: number): Uint8Array {
  const source = new Uint8Array(new SharedArrayBuffer(SOURCE_BYTES));
  keystreamInto(sourceKey(seed), 0, source);
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

function checkRange(material: Uint8Array, offset: number): void {
  if (material.length < MATERIAL_BYTES) throw new RangeError(`entry key material must be ${MATERIAL_BYTES} bytes, got ${material.length}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`payload offset must be a non-negative integer, got ${offset}`);
}

/**
 * Entry bytes [offset, offset + length) are source bytes from (start + offset) mod SOURCE_BYTES on:
 * calls `run` for each stretch up to the source's end, with where it starts in the source and in the range.
 */
function forEachSourceRun(material: Uint8Array, offset: number, length: number, run: (from: number, at: number, n: number) => void): void {
  let from = (startBlockOf(material) * PAYLOAD_BLOCK + (offset % SOURCE_BYTES)) % SOURCE_BYTES;
  for (let done = 0; done < length; from = 0) {
    const n = Math.min(length - done, SOURCE_BYTES - from);
    run(from, done, n);
    done += n;
  }
}

/**
 * Fills `target` with bytes [offset, offset + target.length) of the entry whose key material is
 * `material`, from `source` (payloadSource of the run's seed). Deterministic for the same arguments.
 */
export function fillPayload(source: Uint8Array, material: Uint8Array, offset: number, target: Uint8Array): void {
  if (source.length !== SOURCE_BYTES) throw new RangeError(`payload source must be ${SOURCE_BYTES} bytes, got ${source.length}`);
  checkRange(material, offset);
  forEachSourceRun(material, offset, target.length, (from, at, n) => target.set(source.subarray(from, from + n), at));
  stampBlocks(material, offset, target);
}

/**
 * The same bytes as fillPayload with payloadSource(seed), computed from the keystream of just the
 * source bytes they use: slower per byte than a copy, but with no source to make or keep, which suits
 * one-off ranges (tests, scripts).
 */
export function fillPayloadFromSeed(seed: number, material: Uint8Array, offset: number, target: Uint8Array): void {
  checkRange(material, offset);
  const key = sourceKey(seed);
  forEachSourceRun(material, offset, target.length, (from, at, n) => keystreamInto(key, from, target.subarray(at, at + n)));
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
  fillPayloadFromSeed(seed, entryKeyMaterial(seed, key), offset, out);
  return out;
}
