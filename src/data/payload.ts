// KV payload bytes: an AES-256-CTR keystream keyed by SHA-256(run seed, entry key). Any byte range of
// an entry can be produced independently (the counter is the 16-byte block index), the bytes are
// incompressible, and distinct 4 KiB blocks never repeat (the reference's static-buffer scheme
// repeated up to 96.7 % of blocks, spec §5.1 / §11.14).
import { createCipheriv, createHash } from 'node:crypto';

const AES_BLOCK = 16;
/** Keystream is produced this many bytes at a time from a reused zero buffer. */
const STEP = 64 * 1024; // above glibc's mmap threshold each update would map and fault in fresh pages
const ZEROS = new Uint8Array(STEP);

/** The 32-byte AES key of one entry. */
export function entryKeyMaterial(seed: number, key: string): Buffer {
  return createHash('sha256').update(`kv-payload\u0000${seed}\u0000${key}`).digest();
}

function counterIv(blockIndex: number): Buffer {
  const iv = Buffer.alloc(16);
  // Block indices stay below 2^53; the high 8 bytes of the 128-bit counter hold the upper part.
  iv.writeUInt32BE(Math.floor(blockIndex / 2 ** 32) >>> 0, 8);
  iv.writeUInt32BE(blockIndex >>> 0, 12);
  return iv;
}

/**
 * Fills `target` with bytes [offset, offset + target.length) of the entry whose key material is
 * `material`. Deterministic: the same material and range always give the same bytes.
 */
export function fillPayload(material: Buffer, offset: number, target: Uint8Array): void {
  const firstBlock = Math.floor(offset / AES_BLOCK);
  const skip = offset - firstBlock * AES_BLOCK;
  const cipher = createCipheriv('aes-256-ctr', material, counterIv(firstBlock));
  if (skip > 0) cipher.update(ZEROS.subarray(0, skip));
  let done = 0;
  while (done < target.length) {
    const n = Math.min(STEP, target.length - done);
    const ks = cipher.update(ZEROS.subarray(0, n));
    target.set(ks, done);
    done += n;
  }
}

/** Convenience for tests and small entries: the whole payload of an entry as a fresh buffer. */
export function payloadBytes(seed: number, key: string, size: number, offset = 0): Uint8Array {
  const out = new Uint8Array(size);
  fillPayload(entryKeyMaterial(seed, key), offset, out);
  return out;
}
