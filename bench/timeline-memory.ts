// Memory and cost of the per-second series over a long run, without waiting for one: drives the run
// timeline and the device series (RunSeries) on a simulated clock through `--seconds` seconds (default
// 600, a 10-minute run), recording `--ops-per-sec` storage reads and as many writes a second with
// varied latencies, and prints the heap after a warm-up and at the end (both after a full GC), the
// growth per point, and the cost of a tick early and late in the run. The points themselves are the
// output and grow by one a second; everything else (interval histograms, counters) must stay flat.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { numberArgs } from './lib/args.js';
import { machineLine } from './lib/machine.js';
import { RunSeries } from '../src/engine/run-series.js';
import { DeviceSeries } from '../src/metrics/device-series.js';
import { Recorder } from '../src/metrics/recorder.js';
import { timing } from '../src/tiers/backend.js';

const opts = numberArgs({ seconds: 600, 'ops-per-sec': 2000, warmup: 10 });
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:timeline-memory does)');

/** JS heap and ArrayBuffer memory (the HDR histograms' counts live in typed arrays, outside the heap), after a full GC. */
const memoryMiB = (): { heap: number; buffers: number } => {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed / 2 ** 20, buffers: m.arrayBuffers / 2 ** 20 };
};

let nowMs = 0;
let tick: () => void = () => undefined;
let deviceReads = 0;
const recorder = new Recorder();
const requests = { requestsCompleted: 0, tokensGenerated: 0 };
const series = RunSeries.create({
  recorder,
  requests,
  tiers: { order: ['cpu', 'storage'], entries: { residentBytes: () => 1 << 30 }, limitBytes: () => 4 << 30, operationsInFlight: () => 8 },
  clock: { now: () => nowMs },
  startMs: 0,
  every: (t) => {
    tick = t;
    return () => undefined;
  },
  device: await DeviceSeries.start('sim0', 0, '/sys/block/sim0/stat', () => {
    const k = deviceReads++;
    return Promise.resolve(`${1000 * k} 0 ${8000 * k} ${900 * k} ${500 * k} 0 ${8000 * k} ${700 * k} 4 ${950 * k} ${4000 * k} 0 0 0 0 0 0`);
  }),
});
series.followUsers(() => 20);
series.start();

/** One simulated second: the load, then the tick, timed. */
async function second(s: number): Promise<number> {
  for (let i = 0; i < opts['ops-per-sec']; i++) {
    recorder.recordHitRead('storage', 1 << 20, 64, 'user', true, timing(0.05, 0.2 + ((i * 7919 + s) % 5000) / 100));
    recorder.recordPlacement('storage', 1 << 20, 64, timing(0.05, 1 + ((i * 104729 + s) % 9000) / 100), true);
    series.recordQueueWait((i % 13) / 10);
  }
  requests.requestsCompleted += 40;
  requests.tokensGenerated += 4000;
  nowMs = s * 1000;
  const t0 = performance.now();
  tick();
  const cost = performance.now() - t0;
  await nextTurn(); // the device sample resolves
  return cost;
}

console.log(machineLine());
console.log(`simulated: ${opts.seconds} s, ${opts['ops-per-sec']} storage reads + ${opts['ops-per-sec']} writes a second`);
const costs: number[] = [];
for (let s = 1; s <= opts.warmup; s++) costs.push(await second(s));
const before = memoryMiB();
for (let s = opts.warmup + 1; s <= opts.seconds; s++) costs.push(await second(s));
const after = memoryMiB();
const done = await series.finish(opts.seconds * 1000 + 500);
const points = done.timeline.points.length;
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const window = Math.min(60, Math.floor(costs.length / 2));
console.log(`timeline points: ${points}, device points: ${done.deviceTelemetry?.points.length ?? 0}`);
console.log(`interval histograms allocated: ${series.timelineHistograms} (constant: 2 per storage direction + 1 queue wait)`);
const growth = after.heap - before.heap;
console.log(
  `heap used after ${opts.warmup} s: ${before.heap.toFixed(2)} MiB; after ${opts.seconds} s: ${after.heap.toFixed(2)} MiB; growth ${growth.toFixed(2)} MiB = ${((growth * 2 ** 20) / Math.max(1, opts.seconds - opts.warmup) / 1024).toFixed(2)} KiB per second (the two points it adds)`,
);
console.log(
  `array buffers (histogram counts): ${before.buffers.toFixed(2)} MiB after ${opts.warmup} s, ${after.buffers.toFixed(2)} MiB at the end`,
);
console.log(
  `tick cost: mean ${mean(costs.slice(0, window)).toFixed(3)} ms over the first ${window} s, ${mean(costs.slice(-window)).toFixed(3)} ms over the last ${window} s`,
);
