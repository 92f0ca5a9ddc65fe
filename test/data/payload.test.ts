// Payload bytes (docs/reference-compat.md#rc-38): in the default layout deterministic per seed and key with
// random access by offset; in any layout the repeat rule allows (the pool's: chunks over whatever base a
// slot holds), free of duplicate 512-byte blocks and incompressible, which is what defeats
// dedup/compression in storage. The pool's choice of bases is tested in payload-pool.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { deflateSync } from 'node:zlib';
import { InlinePayloadFactory } from '../../src/data/inline-payload.js';
import {
  BASES,
  MIN_REPEAT_BYTES,
  PAYLOAD_BLOCK,
  SOURCE_BYTES,
  START_ALIGN,
  entryKeyMaterial,
  fillPayload,
  fillPayloadFromSeed,
  payloadBytes,
  payloadSource,
  fillChunk,
  sourceOffsetOf,
  stampChunk,
  stampWordsOf,
} from '../../src/data/payload.js';
import { BUILTIN_MODELS, kvBytesPerToken } from '../../src/model/models.js';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { Rng } from '../../src/util/rng.js';
import { MiB } from '../../src/util/units.js';

/** Dedup granularity checked: the smallest any array uses. */
const BLOCK = 512;
const TINY_1B = BUILTIN_MODELS.get('tiny-1b');
const TOKEN_BYTES = TINY_1B === undefined ? 0 : kvBytesPerToken(TINY_1B);

/** Counts 512-byte blocks whose MD5 was already seen (a fingerprint, not security: fast enough for 10^6 blocks). */
class BlockCensus {
  private readonly seen = new Set<string>();
  blocks = 0;
  duplicates = 0;

  add(chunk: Uint8Array): void {
    for (let at = 0; at < chunk.length; at += BLOCK) {
      const digest = createHash('md5')
        .update(chunk.subarray(at, at + BLOCK))
        .digest('base64');
      this.blocks++;
      if (this.seen.has(digest)) this.duplicates++;
      else this.seen.add(digest);
    }
  }

  async addSource(source: ChunkSource): Promise<void> {
    for await (const chunk of source.chunks()) this.add(chunk);
  }

  assertUnique(): void {
    assert.ok(this.blocks > 0);
    assert.ok(this.duplicates / this.blocks < 0.01, `${this.duplicates} of ${this.blocks} blocks duplicated`);
    assert.equal(this.duplicates, 0, 'stamped blocks never repeat');
  }
}

async function collect(source: ChunkSource): Promise<Uint8Array> {
  const out = new Uint8Array(source.size);
  let at = 0;
  for await (const chunk of source.chunks()) {
    out.set(chunk, at);
    at += chunk.length;
  }
  assert.equal(at, source.size);
  return out;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}

test('tiny-1b has 24,576 KV bytes per token', () => {
  assert.equal(TOKEN_BYTES, 24_576);
});

test('same seed and key give identical bytes; another key or seed differs', () => {
  const size = 10 * TOKEN_BYTES;
  const a = payloadBytes(42, 'user_1_turn_1', size);
  assert.ok(bytesEqual(a, payloadBytes(42, 'user_1_turn_1', size)));
  assert.ok(!bytesEqual(a, payloadBytes(42, 'user_1_turn_2', size)));
  assert.ok(!bytesEqual(a, payloadBytes(43, 'user_1_turn_1', size)));
});

test('two factories with the same seed agree on ten keys', async () => {
  const one = new InlinePayloadFactory(42, 64 * 1024);
  const two = new InlinePayloadFactory(42, 100_000);
  for (let i = 0; i < 10; i++) {
    const key = `key_${i}`;
    const size = 1000 + i * 12_345;
    assert.ok(bytesEqual(await collect(one.source(key, size)), await collect(two.source(key, size))), key);
  }
});

test('any byte range equals the same slice of the whole entry', () => {
  const size = 3 * MiB + 777;
  const whole = payloadBytes(7, 'ranges', size);
  const material = entryKeyMaterial(7, 'ranges');
  const source = payloadSource(7);
  const rng = new Rng(7, 'ranges');
  for (let i = 0; i < 200; i++) {
    const offset = rng.int(0, size - 1);
    const length = rng.int(0, Math.min(size - offset, i % 2 === 0 ? 64 : 2 * MiB));
    const part = new Uint8Array(length);
    fillPayload(source, material, offset, part);
    assert.ok(bytesEqual(part, whole.subarray(offset, offset + length)), `range ${offset}+${length}`);
  }
});

test('fillPayloadFromSeed gives the bytes of fillPayload over the source: unaligned, across the source end, beyond it', () => {
  const seed = 12;
  const source = payloadSource(seed);
  const rng = new Rng(seed, 'from-seed');
  for (let k = 0; k < 4; k++) {
    const material = entryKeyMaterial(seed, `key_${k}`);
    // The entry offset at which its bytes wrap around to the source's start.
    const wrapAt = SOURCE_BYTES - (Buffer.from(material).readUInt32LE(16) % (SOURCE_BYTES / START_ALIGN)) * START_ALIGN;
    assert.equal(sourceOffsetOf(material, wrapAt), 0);
    const ranges: Array<[number, number]> = [
      [0, 0],
      [0, 1],
      [5, 3 * PAYLOAD_BLOCK + 7],
      [wrapAt - 100, 300],
      [wrapAt + 17, 33],
      [SOURCE_BYTES + 3, 5000],
      [rng.int(0, 3 * SOURCE_BYTES), rng.int(1, 200_000)],
    ];
    for (const [offset, length] of ranges) {
      const expected = new Uint8Array(length);
      fillPayload(source, material, offset, expected);
      const got = new Uint8Array(length);
      fillPayloadFromSeed(seed, material, offset, got);
      assert.ok(bytesEqual(got, expected), `key_${k}: range ${offset}+${length}`);
    }
  }
});

test('inline factory: chunks of chunkBytes, a shorter tail, bytes equal payloadBytes', async () => {
  const factory = new InlinePayloadFactory(5, 64 * 1024);
  const size = 5 * 64 * 1024 + 1234;
  const lengths: number[] = [];
  const out = new Uint8Array(size);
  let at = 0;
  for await (const chunk of factory.source('tail', size).chunks()) {
    lengths.push(chunk.length);
    out.set(chunk, at);
    at += chunk.length;
  }
  assert.deepEqual(lengths, [65536, 65536, 65536, 65536, 65536, 1234]);
  assert.ok(bytesEqual(out, payloadBytes(5, 'tail', size)));
  assert.deepEqual(await collect(factory.source('empty', 0)), new Uint8Array(0));
  assert.throws(() => factory.source('bad', -1), RangeError);
});

test('inline factory reuses one buffer, and overlapping iterations do not share it', async () => {
  const factory = new InlinePayloadFactory(1, 4096);
  const seen = new Set<ArrayBufferLike>();
  for (let round = 0; round < 3; round++) {
    for await (const chunk of factory.source(`k${round}`, 3 * 4096).chunks()) seen.add(chunk.buffer);
  }
  assert.equal(seen.size, 1);

  const a = factory
    .source('a', 2 * 4096)
    .chunks()
    [Symbol.asyncIterator]();
  const b = factory
    .source('b', 2 * 4096)
    .chunks()
    [Symbol.asyncIterator]();
  const firstA = await a.next();
  await b.next();
  assert.equal(firstA.done, false);
  if (!firstA.done) assert.ok(bytesEqual(firstA.value, payloadBytes(1, 'a', 4096)));
  await a.return?.(undefined);
  await b.return?.(undefined);
});

test('dedup: 50 entries of 100 tiny-1b tokens share no 512-byte block', async () => {
  const factory = new InlinePayloadFactory(42, MiB);
  const census = new BlockCensus();
  for (let i = 0; i < 50; i++) await census.addSource(factory.source(`entry_${i}`, 100 * TOKEN_BYTES));
  census.assertUnique();
});

test('dedup: 8 entries of mixed lengths 128…3000 tokens, over 4 sources in all (seed 99)', async () => {
  const factory = new InlinePayloadFactory(99, 4 * MiB);
  const tokens = [128, 256, 512, 1000, 1024, 2048, 555, 3000];
  const census = new BlockCensus();
  for (const [i, n] of tokens.entries()) await census.addSource(factory.source(`mixed_${i}_${n}`, n * TOKEN_BYTES));
  census.assertUnique();
});

test('dedup: 10 same-seed entries of 512 tokens', async () => {
  const factory = new InlinePayloadFactory(42, MiB);
  const census = new BlockCensus();
  for (let i = 0; i < 10; i++) await census.addSource(factory.source(`same_seed_${i}`, 512 * TOKEN_BYTES));
  census.assertUnique();
});

test('incompressible: zstd -3 saves under 1% of an entry of 1.5 sources', () => {
  const input = payloadBytes(42, 'zstd', SOURCE_BYTES + SOURCE_BYTES / 2);
  const r = spawnSync('zstd', ['-3', '-c', '-q'], { input, maxBuffer: 2 * input.length });
  assert.equal(r.status, 0, `zstd failed: ${r.error?.message ?? r.stderr?.toString()}`);
  assert.ok(r.stdout.length > input.length * 0.99, `zstd -3 packed ${input.length} bytes into ${r.stdout.length}`);
});

test('incompressible: deflate level 6 saves under 1% of 8 MiB', () => {
  const input = payloadBytes(42, 'compress', 8 * MiB);
  const output = deflateSync(input, { level: 6 });
  assert.ok(output.length > input.length * 0.99, `deflated to ${output.length} of ${input.length}`);
});

test('an entry longer than the source wraps around it without repeating a 4 KiB block', () => {
  const size = SOURCE_BYTES + 3 * MiB;
  const census = new BlockCensus();
  const material = entryKeyMaterial(8, 'long');
  const source = payloadSource(8);
  const chunk = new Uint8Array(4 * MiB);
  for (let offset = 0; offset < size; offset += chunk.length) {
    const view = chunk.subarray(0, Math.min(chunk.length, size - offset));
    fillPayload(source, material, offset, view);
    census.add(view);
  }
  assert.equal(census.blocks, size / PAYLOAD_BLOCK);
  census.assertUnique();
});

/** `n` keys `${prefix}<i>` whose entries start at the same source offset. */
function keysWithOneStart(seed: number, prefix: string, n: number): string[] {
  const byStart = new Map<number, string[]>();
  for (let i = 0; ; i++) {
    const key = `${prefix}${i}`;
    const start = sourceOffsetOf(entryKeyMaterial(seed, key), 0);
    const keys = byStart.get(start) ?? [];
    keys.push(key);
    byStart.set(start, keys);
    if (keys.length === n) return keys;
  }
}

test('entries start at one of the source bases, chosen by the key', () => {
  const starts = new Set(Array.from({ length: 256 }, (_, i) => sourceOffsetOf(entryKeyMaterial(3, `q${i}`), 0)));
  assert.deepEqual(
    [...starts].sort((a, b) => a - b),
    Array.from({ length: BASES }, (_, q) => q * START_ALIGN),
  );
});

test('two keys with one start share the source bytes after each stamp and differ in every stamp', () => {
  const [a, b] = keysWithOneStart(9, 'k', 2).map((key) => payloadBytes(9, key, 64 * PAYLOAD_BLOCK));
  assert.ok(a !== undefined && b !== undefined);
  for (let at = 0; at < a.length; at += PAYLOAD_BLOCK) {
    assert.ok(
      bytesEqual(a.subarray(at + 16, at + PAYLOAD_BLOCK), b.subarray(at + 16, at + PAYLOAD_BLOCK)),
      'same source bytes after the stamp',
    );
    assert.ok(!bytesEqual(a.subarray(at, at + 16), b.subarray(at, at + 16)), `stamps of block ${at / PAYLOAD_BLOCK} differ`);
  }
});

test('fillChunk over the default base is fillPayload; stampChunk turns a buffer holding that base for any entry into it', () => {
  const seed = 4;
  const source = payloadSource(seed);
  const stampWords = stampWordsOf(source);
  const rng = new Rng(seed, 'stamp');
  // Word-aligned (every slot of a run) and unaligned views, whole blocks and ragged tails.
  const backing = new Uint8Array(new ArrayBuffer(4 * MiB + 8));
  for (const [offset, length, shift] of [
    [0, 4 * MiB, 0],
    [SOURCE_BYTES, 4 * MiB, 0],
    [3 * SOURCE_BYTES + 4 * MiB, 4 * MiB - 777, 0],
    [8 * PAYLOAD_BLOCK, 3 * PAYLOAD_BLOCK + 9, 1],
    [rng.int(0, 100) * PAYLOAD_BLOCK, 100_000, 4],
  ] as const) {
    const buffer = backing.subarray(shift, shift + length);
    const material = entryKeyMaterial(seed, 'next');
    const from = sourceOffsetOf(material, offset);
    if (from + length > SOURCE_BYTES) continue; // a chunk does not wrap the source
    fillChunk(source, entryKeyMaterial(seed, 'previous'), offset + 2 * MiB, from, buffer); // another key and index, same base
    stampChunk(source, material, offset, from, buffer);
    const expected = new Uint8Array(length);
    fillPayloadFromSeed(seed, material, offset, expected);
    assert.ok(bytesEqual(buffer, expected), `range ${offset}+${length} at shift ${shift}`);
    fillChunk(source, material, offset, from, buffer);
    assert.ok(bytesEqual(buffer, expected), `fillChunk ${offset}+${length} at shift ${shift}`);
    // The packed stamp source (a generator thread's) gives the same bytes.
    fillChunk(source, entryKeyMaterial(seed, 'previous'), offset + 2 * MiB, from, buffer);
    stampChunk(source, material, offset, from, buffer, stampWords);
    assert.ok(bytesEqual(buffer, expected), `stampChunk with stamp words ${offset}+${length} at shift ${shift}`);
  }
  assert.throws(() => fillChunk(source, entryKeyMaterial(seed, 'x'), 100, 0, backing), /starts on a 512-byte block/);
  assert.throws(() => fillChunk(source, entryKeyMaterial(seed, 'x'), 0, SOURCE_BYTES - MiB, backing), /cannot copy the source from/);
});

/** Entry `key` over the given bases, one per 4 MiB chunk in turn, stamped into one reused buffer as the pool does. */
function entryOverBases(seed: number, key: string, size: number, bases: readonly number[]): Uint8Array {
  const source = payloadSource(seed);
  const material = entryKeyMaterial(seed, key);
  const out = new Uint8Array(size);
  const slot = new Uint8Array(START_ALIGN);
  for (let offset = 0, i = 0; offset < size; offset += START_ALIGN, i++) {
    const from = (bases[i % bases.length] ?? 0) * START_ALIGN;
    fillChunk(source, entryKeyMaterial(seed, 'warm'), 0, from, slot);
    const view = slot.subarray(0, Math.min(START_ALIGN, size - offset));
    stampChunk(source, material, offset, from, view);
    out.set(view, offset);
  }
  return out;
}

test('the repeat rule keeps an entry incompressible: bases reused no nearer than MIN_REPEAT_BYTES escape an 8 MiB long-range window; reused every 4 MiB they do not', () => {
  const window = ['-3', '--long=23', '-c', '-q']; // zstd levels 1–19 match no further back than 8 MiB (2^23)
  const saved = (input: Uint8Array): number => {
    const r = spawnSync('zstd', window, { input, maxBuffer: 2 * input.length });
    assert.equal(r.status, 0, `zstd failed: ${r.error?.message ?? r.stderr?.toString()}`);
    return 1 - r.stdout.length / input.length;
  };
  const size = 48 * MiB;
  const nearest = MIN_REPEAT_BYTES / START_ALIGN; // the pool's closest reuse: every 4th chunk
  const allowed = saved(
    entryOverBases(
      6,
      'rule',
      size,
      Array.from({ length: nearest }, (_, i) => (i * 3) % BASES),
    ),
  );
  assert.ok(allowed < 0.01, `zstd saved ${(allowed * 100).toFixed(2)} % under the rule`);
  // The check can fail: the same entry with one base for every chunk (repeats 4 MiB apart) shrinks to a few %.
  const broken = saved(entryOverBases(6, 'rule', size, [1]));
  assert.ok(broken > 0.8, `zstd saved only ${(broken * 100).toFixed(2)} % with repeats 4 MiB apart`);
});

test('dedup across a run of pool-like entries: 200 MiB of mixed lengths through 6 reused slots, stamped wherever the rule allows', () => {
  const seed = 31;
  const source = payloadSource(seed);
  const rng = new Rng(seed, 'census');
  const slots = Array.from({ length: 6 }, () => ({ bytes: new Uint8Array(START_ALIGN), base: -1 }));
  const census = new BlockCensus();
  let stamped = 0;
  for (let e = 0; census.blocks < (200 * MiB) / PAYLOAD_BLOCK; e++) {
    const size = rng.int(1, 40 * 1024) * PAYLOAD_BLOCK - rng.int(0, 511); // up to 20 MiB, ragged tails
    const material = entryKeyMaterial(seed, `run_${e}`);
    const recent: number[] = [];
    for (let offset = 0; offset < size; offset += START_ALIGN) {
      const slot = slots[rng.int(0, slots.length - 1)] ?? { bytes: new Uint8Array(0), base: -1 };
      const reuse = slot.base >= 0 && !recent.includes(slot.base);
      let from = reuse ? slot.base : sourceOffsetOf(material, offset);
      while (recent.includes(from)) from = (from + START_ALIGN) % SOURCE_BYTES;
      recent.push(from);
      if (recent.length >= MIN_REPEAT_BYTES / START_ALIGN) recent.shift();
      const view = slot.bytes.subarray(0, Math.min(START_ALIGN, size - offset));
      (reuse ? stampChunk : fillChunk)(source, material, offset, from, view);
      if (reuse) stamped++;
      else slot.base = view.length === START_ALIGN ? from : -1;
      census.add(view);
    }
  }
  assert.ok(stamped > 0);
  census.assertUnique();
});

test('dedup across slot reuse: 64 entries generated through one reused 1 MiB buffer by stamps', () => {
  const seed = 21;
  const source = payloadSource(seed);
  const buffer = new Uint8Array(MiB);
  const census = new BlockCensus();
  fillChunk(source, entryKeyMaterial(seed, 'warm'), 0, 0, buffer);
  for (let i = 0; i < 64; i++) {
    stampChunk(source, entryKeyMaterial(seed, `reused_${i}`), 0, 0, buffer);
    census.add(buffer);
  }
  census.assertUnique();
});

test('entry key material: distinct stamps for 300,000 similar keys, about half the bits flip per changed character, and the seed matters', () => {
  // The stamp (bytes 0–15) is what keeps blocks at the same place of the source apart between entries.
  const stamps = new Set<string>();
  const hex = (m: Uint8Array): string => Buffer.from(m.subarray(0, 16)).toString('hex');
  for (let i = 0; i < 300_000; i++) stamps.add(hex(entryKeyMaterial(1, `b_${i}`)));
  assert.equal(stamps.size, 300_000);
  let flipped = 0;
  let pairs = 0;
  for (let i = 0; i < 2000; i++) {
    const a = entryKeyMaterial(3, `block-${i}-tail`);
    const b = entryKeyMaterial(3, `block-${i}-tall`); // one code unit apart
    for (let j = 0; j < 32; j++) for (let x = a[j] ^ b[j]; x !== 0; x &= x - 1) flipped++;
    pairs++;
  }
  const share = flipped / (pairs * 256);
  assert.ok(share > 0.48 && share < 0.52, `share of bits flipped ${share}`);
  assert.notEqual(hex(entryKeyMaterial(1, 'k')), hex(entryKeyMaterial(2, 'k')));
  assert.notEqual(hex(entryKeyMaterial(1, 'k')), hex(entryKeyMaterial(1 + 2 ** 32, 'k')));
  assert.deepEqual(entryKeyMaterial(9, 'same'), entryKeyMaterial(9, 'same'));
});
