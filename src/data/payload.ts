// KV payload bytes. An entry is made of 4 MiB spans (entry offsets [4k MiB, 4(k+1) MiB)); span k is
// a copy of one 4 MiB "base" of a random source per run seed (SOURCE_BYTES of AES-256-CTR keystream,
// BASES bases), except the first 16 bytes of every 512-byte block, which are that base's bytes XORed
// with a stamp of the key's hash and the block's index in the entry. Which base a span copies is free
// within one rule (below); the default layout, the one fillPayload and the inline factories write, is
// base (start + k) mod BASES, the start chosen by the key, so an entry there is deterministic per
// (seed, key) and any byte range can be produced on its own. The PayloadPool instead picks for each
// chunk the base a free slot already holds (chunks at fixed offsets, fillChunk/stampChunk). So:
// - no two 512-byte blocks of a run are equal, at any dataset size (arrays that deduplicate at 512 B
//   find nothing): blocks at different places of the source differ in 496 random bytes, and blocks at
//   the same place carry different stamps (another block index of the same key, or another key's 64-bit
//   hash prefix) — the reference's static buffer repeated up to 96.7 % of blocks
//   (docs/reference-compat.md#rc-38);
// - incompressible: every byte is keystream, and an entry repeats a base no nearer than
//   MIN_REPEAT_BYTES (16 MiB) after its last use — beyond the match window of zstd's levels 1–19 (at
//   most 8 MiB); a long-range matcher (`zstd --long`) over an entry larger than 16 MiB finds the
//   repeat, and similarity-based reduction (blocks that differ by a few bytes) would find the shared
//   base bytes, as it would with fio's scramble_buffers;
// - cheap: a buffer that already holds a base (a payload slot reused) becomes the next chunk by
//   rewriting its stamps alone — 1/32 of the bytes, one cache line in eight — instead of copying it
//   whole (stampChunk; fio's scramble_buffers idea); the pool can do that for nearly every chunk
//   because any base the entry has not used in the last MIN_REPEAT_BYTES will do.
import { createCipheriv, createHash } from 'node:crypto';
import { endianness } from 'node:os';
import { MiB } from '../util/units.js';

/** Stamped block size: the granularity at which blocks are unique (some arrays deduplicate at 512 B). */
export const PAYLOAD_BLOCK = 512;
/** Random source per seed, shared by all entries (and all generator threads): BASES bases. */
export const SOURCE_BYTES = 32 * MiB;
const STAMP_BYTES = 16;
/** Bytes of entry key material; the first 16 make the stamp, the next 4 choose the start in the source. */
export const MATERIAL_BYTES = 32;
/**
 * A base: entries start at a multiple of this in the source (the I/O chunk size), so every 4 MiB span
 * of an entry copies one whole base, and the key spreads the entries' first spans over all of them.
 */
export const START_ALIGN = 4 * MiB;
/** The bases of the source. */
export const BASES = SOURCE_BYTES / START_ALIGN;
/**
 * An entry's bytes at offsets o and o + d copy the same source bytes only when d ≥ this (the default
 * layout: d is a multiple of SOURCE_BYTES): beyond the 8 MiB window of zstd levels 1–19.
 */
export const MIN_REPEAT_BYTES = 16 * MiB;

/** Keystream is produced this many bytes at a time from a reused zero buffer (below glibc's mmap threshold). */
const KEYSTREAM_STEP = 64 * 1024;
/** AES block: the unit of the CTR counter. */
const AES_BLOCK = 16;
/** Words of the fast stamp path are read and written in the machine's byte order; the stamp is defined little-endian. */
const LITTLE_ENDIAN = endianness() === 'LE';

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
 * generator threads can share it. Made afresh on each call (tens of milliseconds): whoever generates
 * many entries holds it (a PayloadPool, an InlinePayloadFactory).
 */
export function payloadSource(seed: number): Uint8Array {
  const source = new Uint8Array(new SharedArrayBuffer(SOURCE_BYTES));
  keystreamInto(sourceKey(seed), 0, source);
  return source;
}

/** Odd 32-bit multipliers of entryKeyMaterial's four lanes (each lane mixes with its own). */
const LANE_MULTIPLIERS = [0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f] as const;

/** `word` as 4 little-endian bytes at `at`. */
function putWord(out: Uint8Array, at: number, word: number): void {
  out[at] = word & 0xff;
  out[at + 1] = (word >>> 8) & 0xff;
  out[at + 2] = (word >>> 16) & 0xff;
  out[at + 3] = word >>> 24;
}

/** A 32-bit finalizer: every input bit flips each output bit with probability about ½. */
function avalanche(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The MATERIAL_BYTES of one entry: a 256-bit hash of the run seed and the key, made of four 32-bit
 * lanes that each take every UTF-16 code unit of the key with their own multiplier, then finalized
 * twice (bytes 0–15, the stamp; 16–31, of which 16–19 choose the start). Not cryptographic: what is
 * asked of it is that distinct keys get distinct stamps (four independent 32-bit lanes) and evenly
 * spread starts. It was SHA-256 (crypto.hash), ~2.3 µs per entry written, a twentieth of the event
 * loop's time in a run of 16 KiB blocks; this is ~0.3 µs. (Payload bytes therefore differ from
 * versions before 2026-11-28; nothing reads them back to compare.)
 */
export function entryKeyMaterial(seed: number, key: string, out: Uint8Array = new Uint8Array(MATERIAL_BYTES)): Uint8Array {
  if (out.length !== MATERIAL_BYTES) throw new RangeError(`entry key material is ${MATERIAL_BYTES} bytes, not ${out.length}`);
  const s = avalanche(seed >>> 0) ^ Math.floor(seed / 2 ** 32);
  let h0 = avalanche(s ^ 0x6a09e667);
  let h1 = avalanche(s ^ 0xbb67ae85);
  let h2 = avalanche(s ^ 0x3c6ef372);
  let h3 = avalanche(s ^ 0xa54ff53a);
  const [m0, m1, m2, m3] = LANE_MULTIPLIERS;
  for (let i = 0; i < key.length; i++) {
    const u = key.charCodeAt(i);
    h0 = Math.imul(h0 ^ u, m0);
    h0 = (h0 << 13) | (h0 >>> 19);
    h1 = Math.imul(h1 ^ u, m1);
    h1 = (h1 << 11) | (h1 >>> 21);
    h2 = Math.imul(h2 ^ u, m2);
    h2 = (h2 << 15) | (h2 >>> 17);
    h3 = Math.imul(h3 ^ u, m3);
    h3 = (h3 << 17) | (h3 >>> 15);
  }
  const n = key.length;
  h0 ^= n;
  h1 ^= n;
  h2 ^= n;
  h3 ^= n;
  // Bytes stored one by one (little-endian words): a DataView would need `out.buffer`, which moves a
  // small typed array off V8's heap — a microsecond per call.
  putWord(out, 0, avalanche(h0));
  putWord(out, 4, avalanche(h1));
  putWord(out, 8, avalanche(h2));
  putWord(out, 12, avalanche(h3));
  // The second half mixes neighbouring lanes, so the start (bytes 16–19) depends on two of them.
  putWord(out, 16, avalanche(h0 ^ h1));
  putWord(out, 20, avalanche(h1 ^ h2));
  putWord(out, 24, avalanche(h2 ^ h3));
  putWord(out, 28, avalanche(h3 ^ h0));
  return out;
}

/** Where byte `offset` of the entry whose key material is `material` lies in the source. */
export function sourceOffsetOf(material: Uint8Array, offset: number): number {
  const m = material;
  const word = ((m[16] ?? 0) | ((m[17] ?? 0) << 8) | ((m[18] ?? 0) << 16) | ((m[19] ?? 0) << 24)) >>> 0;
  const start = (word % BASES) * START_ALIGN;
  return (start + (offset % SOURCE_BYTES)) % SOURCE_BYTES;
}

function checkRange(material: Uint8Array, offset: number): void {
  if (material.length < MATERIAL_BYTES) throw new RangeError(`entry key material must be ${MATERIAL_BYTES} bytes, got ${material.length}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`payload offset must be a non-negative integer, got ${offset}`);
}

function checkSource(source: Uint8Array): void {
  if (source.length !== SOURCE_BYTES) throw new RangeError(`payload source must be ${SOURCE_BYTES} bytes, got ${source.length}`);
}

/**
 * Entry bytes [offset, offset + length) are source bytes from sourceOffsetOf(offset) on: calls `run`
 * for each stretch up to the source's end, with where it starts in the source and in the range.
 */
function forEachSourceRun(material: Uint8Array, offset: number, length: number, run: (from: number, at: number, n: number) => void): void {
  let from = sourceOffsetOf(material, offset);
  for (let done = 0; done < length; from = 0) {
    const n = Math.min(length - done, SOURCE_BYTES - from);
    run(from, done, n);
    done += n;
  }
}

/**
 * Fills `target` with bytes [offset, offset + target.length) of the entry whose key material is
 * `material`, from `source` (payloadSource of the run's seed): a copy of the source bytes, then the stamps.
 */
export function fillPayload(source: Uint8Array, material: Uint8Array, offset: number, target: Uint8Array): void {
  checkSource(source);
  checkRange(material, offset);
  forEachSourceRun(material, offset, target.length, (from, at, n) => target.set(source.subarray(from, from + n), at));
  writeStamps(source, material, offset, target);
}

/**
 * Fills `target` with the chunk of an entry at `offset` (a multiple of PAYLOAD_BLOCK) that copies the
 * source from `from` (not past the source's end): the source bytes, then the entry's stamps. With
 * `from` = sourceOffsetOf(material, offset) these are fillPayload's bytes; a PayloadPool passes the
 * base a free slot holds, within the repeat rule (MIN_REPEAT_BYTES).
 */
export function fillChunk(
  source: Uint8Array,
  material: Uint8Array,
  offset: number,
  from: number,
  target: Uint8Array,
  stampWords?: Uint32Array,
): void {
  checkChunk(source, material, offset, from, target);
  target.set(source.subarray(from, from + target.length));
  stampsFrom(source, material, offset, from, target, stampWords);
}

/**
 * fillChunk's result when `target` already holds source bytes from `from` outside the stamps: the
 * stamps alone (read from `stampWords`, stampWordsOf(source), when given: faster).
 */
export function stampChunk(
  source: Uint8Array,
  material: Uint8Array,
  offset: number,
  from: number,
  target: Uint8Array,
  stampWords?: Uint32Array,
): void {
  checkChunk(source, material, offset, from, target);
  stampsFrom(source, material, offset, from, target, stampWords);
}

function checkChunk(source: Uint8Array, material: Uint8Array, offset: number, from: number, target: Uint8Array): void {
  checkSource(source);
  checkRange(material, offset);
  if (offset % PAYLOAD_BLOCK !== 0) throw new RangeError(`a chunk starts on a ${PAYLOAD_BLOCK}-byte block, got offset ${offset}`);
  if (!Number.isSafeInteger(from) || from < 0 || from % 4 !== 0 || from + target.length > SOURCE_BYTES) {
    throw new RangeError(`a chunk of ${target.length} bytes cannot copy the source from ${from}`);
  }
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
  // target now holds the source bytes of the range: it is its own source for the stamps.
  forEachStamp(offset, target.length, (at, first, last, lo, hi) => {
    for (let j = first; j < last; j++) target[at + j - first] = (target[at + j - first] ?? 0) ^ stampByte(material, j, lo, hi);
  });
}

/** Byte j (0–15) of a block's stamp: key bytes 0–15 XOR (0⁸ ‖ le64(block index)). */
function stampByte(material: Uint8Array, j: number, lo: number, hi: number): number {
  const index = j < 8 ? 0 : j < 12 ? (lo >>> (8 * (j - 8))) & 0xff : (hi >>> (8 * (j - 12))) & 0xff;
  return (material[j] ?? 0) ^ index;
}

/**
 * Calls `stamp` for each block whose stamp bytes [first, last) lie in the range [offset, offset + length):
 * `at` is where the first of them is in the range, lo/hi the block index's 32-bit halves.
 */
function forEachStamp(
  offset: number,
  length: number,
  stamp: (at: number, first: number, last: number, lo: number, hi: number) => void,
): void {
  const end = offset + length;
  let block = Math.floor(offset / PAYLOAD_BLOCK);
  for (let blockStart = block * PAYLOAD_BLOCK; blockStart < end; block++, blockStart += PAYLOAD_BLOCK) {
    const first = Math.max(0, offset - blockStart);
    const last = Math.min(STAMP_BYTES, end - blockStart);
    if (first < last) stamp(blockStart + first - offset, first, last, block >>> 0, Math.floor(block / 2 ** 32) >>> 0);
  }
}

/** target[stamp bytes] = source[same offsets] XOR stamp, for every stamp in the range. */
function writeStamps(source: Uint8Array, material: Uint8Array, offset: number, target: Uint8Array): void {
  stampsFrom(source, material, offset, sourceOffsetOf(material, offset), target);
}

/** writeStamps for a target that copies the source from `from` on (wrapping at its end). */
function stampsFrom(
  source: Uint8Array,
  material: Uint8Array,
  offset: number,
  from: number,
  target: Uint8Array,
  stampWords?: Uint32Array,
): void {
  if (wordStamps(source, material, offset, from, target, stampWords)) return;
  forEachStamp(offset, target.length, (at, first, last, lo, hi) => {
    for (let j = first; j < last; j++) {
      const k = j - first;
      target[at + k] = (source[(from + at + k) % SOURCE_BYTES] ?? 0) ^ stampByte(material, j, lo, hi);
    }
  });
}

/**
 * The source's first 16 bytes of every 512-byte block, packed (1/32 of the source, 1 MiB): stamping
 * reads these in sequence instead of one scattered cache line per block of the source. Made once per
 * generator thread; stampChunk/fillChunk take it as an option.
 */
export function stampWordsOf(source: Uint8Array): Uint32Array {
  checkSource(source);
  const blocks = SOURCE_BYTES / PAYLOAD_BLOCK;
  const out = new Uint32Array(blocks * (STAMP_BYTES / 4));
  const view = new DataView(source.buffer, source.byteOffset, source.length);
  for (let b = 0; b < blocks; b++) for (let j = 0; j < 4; j++) out[b * 4 + j] = view.getUint32(b * PAYLOAD_BLOCK + 4 * j, LITTLE_ENDIAN);
  return out;
}

/**
 * writeStamps four bytes at a time, where everything is word-aligned (every payload slot and chunk of a
 * run): 4 word writes per 512-byte block, read from `stampWords` (stampWordsOf the source) when given
 * and the range starts on a source block, else from the source. Returns false, doing nothing, where it
 * does not apply.
 */
function wordStamps(
  source: Uint8Array,
  material: Uint8Array,
  offset: number,
  sourceFrom: number,
  target: Uint8Array,
  stampWords?: Uint32Array,
): boolean {
  const aligned = offset % PAYLOAD_BLOCK === 0 && sourceFrom % 4 === 0 && target.byteOffset % 4 === 0 && source.byteOffset % 4 === 0;
  if (!LITTLE_ENDIAN || !aligned) return false;
  const words = Math.floor(target.length / 4);
  const out = new Uint32Array(target.buffer, target.byteOffset, words);
  const packed = stampWords !== undefined && sourceFrom % PAYLOAD_BLOCK === 0;
  // Where a block's 4 stamp words are read: every 128th word of the source, or 4 in a row packed.
  const src = packed ? stampWords : new Uint32Array(source.buffer, source.byteOffset, SOURCE_BYTES / 4);
  const step = packed ? STAMP_BYTES / 4 : PAYLOAD_BLOCK / 4;
  const m = new DataView(material.buffer, material.byteOffset, STAMP_BYTES);
  const m0 = m.getUint32(0, true);
  const m1 = m.getUint32(4, true);
  const m2 = m.getUint32(8, true);
  const m3 = m.getUint32(12, true);
  const blockWords = PAYLOAD_BLOCK / 4;
  const firstBlock = offset / PAYLOAD_BLOCK;
  const wholeBlocks = Math.floor(target.length / PAYLOAD_BLOCK);
  const sourceWords = src.length;
  let from = (sourceFrom / PAYLOAD_BLOCK) * step;
  // The index's high word changes only every 2^32 blocks (2 TiB): per run of blocks below such a boundary.
  for (let b = 0; b < wholeBlocks;) {
    const block = firstBlock + b;
    const hi = Math.floor(block / 2 ** 32);
    const runEnd = Math.min(wholeBlocks, b + (2 ** 32 - (block % 2 ** 32)));
    const m3hi = m3 ^ (hi >>> 0);
    for (let lo = block >>> 0, w = b * blockWords; b < runEnd; b++, lo++, w += blockWords) {
      out[w] = src[from] ^ m0;
      out[w + 1] = src[from + 1] ^ m1;
      out[w + 2] = src[from + 2] ^ m2 ^ lo;
      out[w + 3] = src[from + 3] ^ m3hi;
      from += step;
      if (from >= sourceWords) from -= sourceWords;
    }
  }
  // A tail shorter than a block: its stamp bytes one by one.
  const tail = wholeBlocks * PAYLOAD_BLOCK;
  if (tail < target.length) {
    const rest = target.subarray(tail);
    const restFrom = (sourceFrom + tail) % SOURCE_BYTES;
    forEachStamp(offset + tail, rest.length, (at, first, last, lo, hi) => {
      for (let j = first; j < last; j++)
        rest[at + j - first] = (source[(restFrom + at + j - first) % SOURCE_BYTES] ?? 0) ^ stampByte(material, j, lo, hi);
    });
  }
  return true;
}

/** Convenience for tests and small entries: bytes [offset, offset + size) of an entry as a fresh buffer. */
export function payloadBytes(seed: number, key: string, size: number, offset = 0): Uint8Array {
  const out = new Uint8Array(size);
  fillPayloadFromSeed(seed, entryKeyMaterial(seed, key), offset, out);
  return out;
}
