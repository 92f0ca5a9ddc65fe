// The run timeline on hand-fed counters: each point holds exactly what completed in its interval,
// the state at its end, and its own latencies; the points add up to the run's totals; the last
// point is the shorter remainder; a window under one interval has no points.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Recorder } from '../../src/metrics/recorder.js';
import { TimelineSampler } from '../../src/metrics/timeline.js';
import type { TimelineSources } from '../../src/metrics/timeline.js';
import { timing } from '../../src/tiers/backend.js';
import type { TierName } from '../../src/tiers/backend.js';

interface Fixture {
  readonly rec: Recorder;
  readonly requests: { requestsCompleted: number; tokensGenerated: number };
  readonly state: { users: number; inFlight: number; occupancy: Partial<Record<TierName, number>> };
  readonly sources: TimelineSources;
}

function fixture(): Fixture {
  const rec = new Recorder();
  const requests = { requestsCompleted: 0, tokensGenerated: 0 };
  const state = { users: 0, inFlight: 0, occupancy: {} as Partial<Record<TierName, number>> };
  return {
    rec,
    requests,
    state,
    sources: {
      recorder: rec,
      requests,
      tiers: ['cpu', 'storage'],
      occupancyBytes: (t) => state.occupancy[t] ?? 0,
      activeUsers: () => state.users,
      operationsInFlight: () => state.inFlight,
    },
  };
}

test('a point holds what completed in its interval, the state at its end and its own latency percentiles', () => {
  const { rec, requests, state, sources } = fixture();
  const tl = new TimelineSampler(sources, 5_000); // the window starts at 5 s on the run's clock
  rec.recordPlacement('storage', 4096, 10, timing(1, 9), true); // 10 ms
  rec.recordHitRead('storage', 8192, 20, 'user', true, timing(0, 30));
  rec.recordHitRead('cpu', 100, 1, 'user', false, timing(0, 0.5));
  rec.recordMiss();
  rec.recordDemotion('cpu', 'storage', 1000, 2, timing(0, 1), timing(0, 50)); // a storage write too
  rec.recordEvictionDelete('storage', 4096);
  tl.recordQueueWait(3);
  requests.requestsCompleted = 2;
  requests.tokensGenerated = 500;
  state.users = 4;
  state.inFlight = 3;
  state.occupancy = { cpu: 0, storage: 9192 };
  const p = tl.sample(7_000);
  assert.deepEqual(p, {
    t_sec: 2,
    duration_sec: 2,
    requests_completed: 2,
    tokens_per_sec: 250,
    hit_rate: 2 / 3,
    users: 4,
    in_flight_ops: 3,
    queue_wait_ms_p95: 3.001, // HDR percentiles are the bucket's highest equivalent value (3 significant digits)
    evictions: 2,
    tiers: {
      cpu: { read_bytes: 1100, write_bytes: 0, read_ops: 2, write_ops: 0, occupancy_bytes: 0, evictions: 1 },
      storage: { read_bytes: 8192, write_bytes: 5096, read_ops: 1, write_ops: 2, occupancy_bytes: 9192, evictions: 1 },
    },
    storage_read_latency_ms: { count: 1, p50: 30.015, p95: 30.015, p99: 30.015, max: 30 },
    storage_write_latency_ms: { count: 2, p50: 10.007, p95: 50.015, p99: 50.015, max: 50 },
  });
  // The next interval saw nothing: zeros and nulls, state unchanged.
  const q = tl.sample(8_000);
  assert.equal(q.t_sec, 3);
  assert.equal(q.hit_rate, null);
  assert.equal(q.queue_wait_ms_p95, null);
  assert.deepEqual(q.storage_read_latency_ms, { count: 0, p50: null, p95: null, p99: null, max: null });
  assert.deepEqual(q.tiers.storage, { read_bytes: 0, write_bytes: 0, read_ops: 0, write_ops: 0, occupancy_bytes: 9192, evictions: 0 });
});

test('600 one-second points add up to the totals, the last shorter point included, with the same 5 histograms reused throughout', () => {
  const { rec, requests, sources } = fixture();
  const tl = new TimelineSampler(sources, 0);
  for (let s = 1; s <= 600; s++) {
    for (let k = 0; k < (s % 5) + 1; k++) {
      rec.recordHitRead('storage', 1 << 20, 64, 'user', true, timing(0, s % 50));
      rec.recordPlacement('storage', 1 << 19, 32, timing(0, 2), true);
      tl.recordQueueWait(1);
      requests.requestsCompleted++;
    }
    const p = tl.sample(s * 1000);
    assert.equal(p.storage_read_latency_ms.count, (s % 5) + 1, `second ${s} holds only its own reads`);
    assert.equal(p.storage_read_latency_ms.max, s % 50 === 0 ? 0.001 : s % 50, `second ${s}'s slowest read is its own`);
  }
  rec.recordHitRead('storage', 1234, 1, 'user', true, timing(0, 4)); // completes after the last full second
  const done = tl.finish(600_250);
  assert.equal(done.points.length, 601);
  const last = done.points[600];
  assert.equal(last.t_sec, 600.25);
  assert.equal(last.duration_sec, 0.25);
  assert.equal(last.tiers.storage?.read_bytes, 1234);
  const sum = (pick: (p: (typeof done.points)[number]) => number): number => done.points.reduce((a, p) => a + pick(p), 0);
  const st = rec.traffic.storage;
  assert.equal(
    sum((p) => p.tiers.storage?.read_bytes ?? 0),
    st.readBytes + st.demoteOutBytes,
  );
  assert.equal(
    sum((p) => p.tiers.storage?.write_bytes ?? 0),
    st.writeBytes + st.demoteInBytes,
  );
  assert.equal(
    sum((p) => p.tiers.storage?.read_ops ?? 0),
    st.readOps,
  );
  assert.equal(
    sum((p) => p.requests_completed),
    requests.requestsCompleted,
  );
  assert.equal(tl.histogramsCreated, 5, 'two read and two write window buffers plus the queue-wait histogram: never more');
});

test('a window shorter than one interval has no points; finishing twice changes nothing', () => {
  const { rec, sources } = fixture();
  const tl = new TimelineSampler(sources, 0);
  rec.recordHitRead('storage', 10, 1, 'user', true, timing(0, 1));
  assert.deepEqual(tl.finish(700), { interval_sec: 1, points: [] });
  assert.deepEqual(tl.finish(900).points, []);
  rec.recordHitRead('storage', 10, 1, 'user', true, timing(0, 1));
  assert.equal(rec.latency('storage_read').count, 2, 'the closed timeline no longer holds a window open on the recorder');
});
