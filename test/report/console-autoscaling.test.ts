import { test } from 'node:test';
import assert from 'node:assert/strict';
import { autoscalingBlock, MAX_DECISION_ROWS } from '../../src/report/console-autoscaling.js';
import { formatSummary } from '../../src/report/console.js';
import { buildResultsJson } from '../../src/report/results-json.js';
import type { RunResult } from '../../src/metrics/result.js';
import { runResultFixture } from './fixtures.js';

function event(t: number, action: string, during: number, after: number, tokensPerSec: number, mode = 'capacity'): object {
  return {
    timestamp: t,
    mode,
    action,
    users: after,
    users_during: during,
    users_after: after,
    saturation_level: 0.25,
    read_latency_p95_ms: 10,
    write_latency_p95_ms: 20,
    throughput_tokens_per_sec: tokensPerSec,
  };
}

function capacityRun(stopReason: RunResult['stopReason']): RunResult {
  const base = runResultFixture();
  return {
    ...base,
    stopReason,
    effectiveConfig: { args: {}, model: {}, config: { autoscaler: { consecutive_samples_required: 2 } } },
    autoscaling: {
      events: [
        event(2, 'hold', 7, 7, 354),
        event(4, 'scale_up', 7, 12, 493),
        event(6, 'hold', 12, 12, 1197.25),
        event(8, 'stop', 12, 12, 780),
      ],
      summary: { initial_users: 7, final_users: 12, total_scale_events: 1, peak_user_count: 7, peak_throughput_tokens_per_sec: 354 },
      timeline: [],
    },
  };
}

test('capacity mode: users, the sustained peak, the stop and every decision (users during → after)', () => {
  assert.deepEqual(autoscalingBlock(buildResultsJson(capacityRun('capacity_peak'))), [
    '',
    '### AUTOSCALING (capacity mode) ###',
    '  Users: 7 at start → 12 at the end, 1 scale events',
    '  Peak: 354.0 tok/s sustained at 7 users (the lowest of 2 consecutive samples at that count)',
    '  Stop: capacity_peak — two user counts in a row without a 1 % gain over the peak: the run ended there',
    '    time s  action      users (during → after)       tok/s  saturation',
    '       2.0  hold        7 → 7                        354.0  0.25',
    '       4.0  scale_up    7 → 12                       493.0  0.25',
    '       6.0  hold        12 → 12                    1,197.3  0.25',
    '       8.0  stop        12 → 12                      780.0  0.25',
  ]);
  const cutShort = autoscalingBlock(buildResultsJson(capacityRun('duration')));
  assert.equal(cutShort[4], '  Stop: duration — the run ended before the peak was confirmed (the peak above is the best so far)');
});

test('qos mode: most users and the best single sample; long logs show only the changes', () => {
  const events = Array.from({ length: MAX_DECISION_ROWS + 5 }, (_, i) =>
    event(i + 1, i === 3 ? 'scale_up' : 'hold', 4, i === 3 ? 5 : 4, 100 + i, 'qos'),
  );
  const run: RunResult = {
    ...runResultFixture(),
    stopReason: 'duration',
    autoscaling: { events, summary: { initial_users: 4, final_users: 5, total_scale_events: 1 }, timeline: [] },
  };
  const lines = autoscalingBlock(buildResultsJson(run));
  assert.deepEqual(lines.slice(1), [
    '### AUTOSCALING (qos mode) ###',
    '  Users: 4 at start → 5 at the end, 1 scale events',
    '  Most users: 4   best sample: 124.0 tok/s with 4 users',
    '  Stop: duration (qos mode runs until the run ends)',
    '    time s  action      users (during → after)       tok/s  saturation',
    '       4.0  scale_up    4 → 5                        103.0  0.25',
    '  (24 hold/cooldown samples not shown; every decision is in autoscaling_stats)',
  ]);
});

test('the summary prints AUTOSCALING after QOS, and nothing without autoscaling', () => {
  const withIt = formatSummary(buildResultsJson(capacityRun('capacity_peak')), 'latency').split('\n');
  const heads = withIt.filter((l) => l.startsWith('### '));
  assert.equal(heads[heads.indexOf('### QOS ###') + 1], '### AUTOSCALING (capacity mode) ###');
  assert.deepEqual(autoscalingBlock(buildResultsJson(runResultFixture())), []);
});
