// The storage tier's metadata operations (issue 34): counts per class, refused calls counted apart and
// kept out of the latencies, a reset (the Recorder's, after preparation) that forgets everything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetadataStats, METADATA_OPS } from '../../src/metrics/metadata-stats.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { metadataCall } from '../../src/tiers/metadata-ops.js';

test('counts per class; a failed call is counted as failed and not timed', () => {
  const s = new MetadataStats();
  s.record('create', 0.5, true);
  s.record('create', 1.5, true);
  s.record('create', 900, false); // refused (EEXIST, ENOSPC): no latency sample
  s.record('unlink', 0.25, true);
  s.record('lookup', 0.125, true);
  const snap = s.snapshot();
  assert.deepEqual(Object.keys(snap), [...METADATA_OPS]);
  assert.deepEqual([snap.create.count, snap.create.failed, snap.create.latency.count], [2, 1, 2]);
  assert.equal(snap.create.latency.mean, 1);
  assert.equal(snap.create.latency.max, 1.5);
  assert.deepEqual([snap.unlink.count, snap.unlink.failed, snap.unlink.latency.p50], [1, 0, 0.25]);
  assert.deepEqual([snap.lookup.count, snap.lookup.latency.max], [1, 0.125]);
  for (const op of ['rename', 'link', 'mkdir'] as const)
    assert.deepEqual([snap[op].count, snap[op].failed, snap[op].latency.count], [0, 0, 0]);
});

test("a snapshot is a copy; the Recorder's reset empties every class", () => {
  const rec = new Recorder();
  rec.metadata.record('mkdir', 2, true);
  rec.metadata.record('rename', 1, false);
  const before = rec.metadata.snapshot();
  rec.reset(); // preparation's lay-out and pre-population end here
  assert.deepEqual([before.mkdir.count, before.rename.failed], [1, 1]);
  const after = rec.metadata.snapshot();
  for (const op of METADATA_OPS) assert.deepEqual([after[op].count, after[op].failed, after[op].latency.count], [0, 0, 0]);
  rec.metadata.record('unlink', 3, true);
  assert.deepEqual([rec.metadata.snapshot().unlink.count, rec.metadata.snapshot().unlink.latency.max], [1, 3]);
});

test("metadataCall tells the sink of success, of a failure, and of a rejection that is the storage's answer", async () => {
  const s = new MetadataStats();
  const sink = s.record.bind(s);
  assert.equal(await metadataCall(sink, 'create', () => Promise.resolve(7)), 7);
  const enoent = Object.assign(new Error('gone'), { code: 'ENOENT' });
  await assert.rejects(metadataCall(sink, 'unlink', () => Promise.reject(enoent)));
  await assert.rejects(
    metadataCall(
      sink,
      'lookup',
      () => Promise.reject(enoent),
      (e) => (e as { code?: string }).code === 'ENOENT',
    ),
  );
  const snap = s.snapshot();
  assert.deepEqual([snap.create.count, snap.unlink.count, snap.unlink.failed, snap.lookup.count, snap.lookup.failed], [1, 0, 1, 1, 0]);
});
