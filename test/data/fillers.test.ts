// The native payload fills (native/payload-fill.c via data/fillers.ts) must make exactly the bytes of
// payload.ts's fillChunk / stampChunk, for any chunk a pool can ask for: any length (ragged tails
// shorter than a stamp or a block), any base, entry offsets past 2^32 blocks (the stamp's high word).
// Bad arguments are refused at the call, not in a thread. The helper must be built wherever a C
// compiler is: otherwise the native path would silently never run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { NativeFiller, nativeFillHelper } from '../../src/data/fillers.js';
import {
  entryKeyMaterial,
  fillChunk,
  PAYLOAD_BLOCK,
  payloadSource,
  SOURCE_BYTES,
  stampChunk,
  stampWordsOf,
} from '../../src/data/payload.js';
import { MiB } from '../../src/util/units.js';

const helper = nativeFillHelper();
const COMPILER = process.platform === 'linux' && spawnSync('cc', ['--version']).status === 0;
const NO_HELPER = typeof helper === 'string' ? `the native helper is not built here: ${helper}` : false;

test(
  'the native payload-fill helper is built wherever a C compiler is (npm run build)',
  { skip: COMPILER ? false : 'no C compiler (cc) on this machine' },
  () => {
    assert.equal(typeof helper, 'object', typeof helper === 'string' ? helper : '');
  },
);

const source = payloadSource(7);
const words = stampWordsOf(source);
const stampBytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);

/** A chunk a pool may ask for: where in the entry, which base, how long (within the source). */
const chunkSpec = fc.record({
  key: fc.string({ maxLength: 12 }),
  block: fc.oneof(fc.nat(1 << 20), fc.bigInt(2n ** 32n - 64n, 2n ** 40n).map(Number)),
  base: fc.nat((SOURCE_BYTES - 4 * MiB) / PAYLOAD_BLOCK),
  length: fc.oneof(fc.nat(40), fc.nat(70_000), fc.constant(4 * MiB), fc.integer({ min: 4 * MiB - 600, max: 4 * MiB })),
});

test('native fills make the bytes of fillChunk (a copy) and stampChunk (stamps over the base)', { skip: NO_HELPER }, async () => {
  if (typeof helper === 'string') return;
  const filler = new NativeFiller(helper, source);
  await fc.assert(
    fc.asyncProperty(chunkSpec, async ({ key, block, base, length }) => {
      const material = new Uint8Array(entryKeyMaterial(7, key));
      const entryOffset = block * PAYLOAD_BLOCK;
      const from = base * PAYLOAD_BLOCK;
      const expected = new Uint8Array(length);
      fillChunk(source, material, entryOffset, from, expected);
      // A copy: into a slot holding garbage.
      const copied = new Uint8Array(new SharedArrayBuffer(length)).fill(0xa5);
      await filler.fill(copied, { material, entryOffset, sourceFrom: from, stampOnly: false });
      assert.ok(Buffer.from(copied).equals(Buffer.from(expected)), `copy of ${length} bytes at block ${block} from ${from}`);
      // Stamps alone: a slot that held another entry's chunk over the same base.
      const stamped = new Uint8Array(length);
      fillChunk(source, new Uint8Array(entryKeyMaterial(7, `${key}-other`)), 0, from, stamped);
      await filler.fill(stamped, { material, entryOffset, sourceFrom: from, stampOnly: true });
      assert.ok(Buffer.from(stamped).equals(Buffer.from(expected)), `stamps of ${length} bytes at block ${block} from ${from}`);
      // and the JavaScript stamps agree (the threads' path).
      const js = new Uint8Array(length);
      fillChunk(source, material, 0, from, js);
      stampChunk(source, material, entryOffset, from, js, words);
      assert.ok(Buffer.from(js).equals(Buffer.from(expected)));
    }),
    { numRuns: 60 },
  );
});

test('bad arguments are refused at the call (nothing is queued), and a closed filler rejects', { skip: NO_HELPER }, async () => {
  if (typeof helper === 'string') return;
  const material = new Uint8Array(entryKeyMaterial(7, 'k'));
  const slot = new Uint8Array(4096);
  const never = (): void => assert.fail('callback of a refused fill');
  assert.throws(() => helper.fill(slot, source, stampBytes, material, 100, 0, true, never), /not on a 512-byte block/);
  assert.throws(() => helper.fill(slot, source, stampBytes, material, 0, SOURCE_BYTES - 512, true, never), /does not fit the source/);
  assert.throws(() => helper.fill(slot, source, stampBytes, material.subarray(0, 8), 0, 0, true, never), /does not fit|512-byte/);
  assert.throws(() => helper.fill(slot, source, stampBytes, material, -512, 0, true, never), /entryOffset must be a non-negative integer/);
  assert.throws(
    () => helper.fill([] as unknown as Uint8Array, source, stampBytes, material, 0, 0, true, never),
    /slot must be a Uint8Array/,
  );
  assert.throws(() => helper.fill(slot, source, stampBytes, material, 0, 0, true, undefined as unknown as () => void), /callback/);
  assert.throws(() => helper.stamp(slot, source, stampBytes.subarray(1), material, 0, 0), /does not fit/);
  const filler = new NativeFiller(helper, source);
  await assert.rejects(filler.fill(slot, { material, entryOffset: 100, sourceFrom: 0, stampOnly: true }), /512-byte block/);
  await filler.close();
  await assert.rejects(filler.fill(slot, { material, entryOffset: 0, sourceFrom: 0, stampOnly: false }), /closed/);
});
