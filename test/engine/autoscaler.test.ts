import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Autoscaler } from '../../src/engine/autoscaler.js';
import type { AutoscaleSample, AutoscalerSettings } from '../../src/engine/autoscaler.js';

const BASE: AutoscalerSettings = {
  mode: 'qos',
  targetSaturation: 0.8,
  minUsers: 1,
  maxUsers: 1000,
  scaleUpFactor: 1.2,
  scaleDownFactor: 0.8,
  consecutiveSamplesRequired: 2,
  readLatencyP95ThresholdMs: 100,
  historyWindowSize: 10,
};

/** A storage whose read latency grows with the number of users and whose bandwidth is flat. */
function storageSample(users: number, atSec: number): AutoscaleSample {
  return {
    atSec,
    readP95Ms: 10 * users,
    writeP95Ms: 5 * users,
    storageBytesPerSec: 1e9,
    tokensPerSec: 100 * Math.min(users, 8),
    queueDepth: 0,
  };
}

test('qos mode scales up while latency is low and down once latency saturates', () => {
  const a = new Autoscaler(BASE, 2);
  const users: number[] = [];
  for (let t = 0; t < 40; t++) users.push(a.observe(storageSample(a.currentUsers, t)).users);
  const peak = Math.max(...users);
  assert.ok(peak > 2, 'grew from 2 users');
  assert.ok(
    users.some((u, i) => i > 0 && u < (users[i - 1] ?? 0)),
    'scaled down at least once',
  );
  // Settles where read p95 (10 ms × users) stays around the threshold: never far above 10 users.
  assert.ok(peak <= 16, `peak ${peak}`);
  assert.ok(a.events.some((e) => e.action === 'scale_down'));
  assert.ok(a.events.some((e) => e.action === 'cooldown'));
  const s = a.summary();
  assert.equal(s.initial_users, 2);
  assert.ok(s.total_scale_events >= 2);
});

test('qos mode grows small user counts (the reference could not grow below 5)', () => {
  const a = new Autoscaler(BASE, 1);
  const e = a.observe({ atSec: 0, readP95Ms: 1, writeP95Ms: 1, storageBytesPerSec: 1, tokensPerSec: 1, queueDepth: 0 });
  assert.equal(e.action, 'scale_up');
  assert.equal(e.users, 2);
  assert.equal(a.observe({ atSec: 1, readP95Ms: 1, writeP95Ms: 1, storageBytesPerSec: 1, tokensPerSec: 1, queueDepth: 0 }).users, 3);
});

test('capacity mode climbs while throughput grows, then stops and reports the peak', () => {
  const a = new Autoscaler({ ...BASE, mode: 'capacity' }, 4);
  let last;
  for (let t = 0; t < 50; t++) {
    last = a.observe(storageSample(a.currentUsers, t));
    if (last.action === 'stop') break;
  }
  assert.equal(last?.action, 'stop');
  assert.equal(a.peakTokensPerSec, 800);
  assert.ok(a.peakUsers >= 8);
  assert.equal(last?.peak_throughput_tokens_per_sec, 800);
  const s = a.summary();
  assert.equal(s.peak_user_count, a.peakUsers);
  assert.equal(s.peak_throughput_tokens_per_sec, 800);
});

/** The throughputs (tok/s) of a real capacity run's 2-second samples, with one noisy burst (1,197). */
const NOISY_RUN = [354, 493, 564, 755, 1197, 780, 1133];

function feed(a: Autoscaler, tokens: readonly number[]): Array<ReturnType<Autoscaler['observe']>> {
  return tokens.map((t, i) =>
    a.observe({ atSec: 2 * (i + 1), readP95Ms: 1, writeP95Ms: 1, storageBytesPerSec: 1e9, tokensPerSec: t, queueDepth: 0 }),
  );
}

test('capacity mode, one sample per user count (consecutive_samples_required 1): the burst is the peak, as the reference', () => {
  const a = new Autoscaler({ ...BASE, mode: 'capacity', consecutiveSamplesRequired: 1 }, 7);
  const events = feed(a, NOISY_RUN);
  assert.deepEqual(
    events.map((e) => [e.action, e.users_during, e.users_after]),
    [
      ['scale_up', 7, 12],
      ['scale_up', 12, 17],
      ['scale_up', 17, 22],
      ['scale_up', 22, 27],
      ['scale_up', 27, 32],
      ['hold', 32, 32],
      ['stop', 32, 32],
    ],
  );
  assert.deepEqual([a.peakTokensPerSec, a.peakUsers], [1197, 27]);
});

test('capacity mode, peak confirmed over 2 consecutive samples: each user count is credited with its lower sample', () => {
  const a = new Autoscaler({ ...BASE, mode: 'capacity', consecutiveSamplesRequired: 2 }, 7);
  const events = feed(a, NOISY_RUN);
  // Levels: 7 users (354, 493) → 354; 12 users (564, 755) → 564; 17 users (1,197, 780) → 780; 22 users (1,133, …) unfinished.
  assert.deepEqual(
    events.map((e) => [e.action, e.users_during, e.users_after, e.users]),
    [
      ['hold', 7, 7, 7],
      ['scale_up', 7, 12, 12],
      ['hold', 12, 12, 12],
      ['scale_up', 12, 17, 17],
      ['hold', 17, 17, 17],
      ['scale_up', 17, 22, 22],
      ['hold', 22, 22, 22],
    ],
  );
  assert.deepEqual([a.peakTokensPerSec, a.peakUsers], [780, 17]);
  // 22 users (1,133, 700) → 700 and again (900, 770) → 770: two counts without a 1 % gain over 780
  // stop the run, reporting the sustained peak.
  const more = feed(a, [700, 900, 770]);
  assert.deepEqual(
    more.map((e) => [e.action, e.users_during]),
    [
      ['hold', 22],
      ['hold', 22],
      ['stop', 22],
    ],
  );
  assert.equal(more[2]?.peak_throughput_tokens_per_sec, 780);
  assert.deepEqual(a.summary(), {
    initial_users: 7,
    final_users: 22,
    total_scale_events: 3,
    peak_user_count: 17,
    peak_throughput_tokens_per_sec: 780,
  });
});

test('saturation needs two samples and is halved unless bandwidth has flattened with rising latency', () => {
  const a = new Autoscaler(BASE, 5);
  a.observe({ atSec: 0, readP95Ms: 50, writeP95Ms: 1, storageBytesPerSec: 1e9, tokensPerSec: 1, queueDepth: 0 });
  assert.equal(a.saturation(), 0);
  a.observe({ atSec: 1, readP95Ms: 80, writeP95Ms: 1, storageBytesPerSec: 1e9, tokensPerSec: 1, queueDepth: 0 });
  assert.equal(a.saturation(), 0.8);
  const b = new Autoscaler(BASE, 5);
  b.observe({ atSec: 0, readP95Ms: 80, writeP95Ms: 1, storageBytesPerSec: 1e9, tokensPerSec: 1, queueDepth: 0 });
  b.observe({ atSec: 1, readP95Ms: 80, writeP95Ms: 1, storageBytesPerSec: 2e9, tokensPerSec: 1, queueDepth: 0 });
  assert.equal(b.saturation(), 0.4);
});
