import assert from 'node:assert/strict';
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BarrierError, DirStore, FileBarrier } from '../../src/engine/barrier.js';
import type { BarrierStore } from '../../src/engine/barrier.js';
import { RankSession, START_LEAD_MS } from '../../src/engine/rank-session.js';
import { ManualTime, settle } from '../util/manual-time.js';
import { withTempDir } from '../util/temp-dir.js';

/** A store in memory: every operation completes at once, so manual time alone decides the order. */
class MemoryStore implements BarrierStore {
  readonly docs = new Map<string, unknown>();
  put(name: string, value: unknown): Promise<void> {
    this.docs.set(name, structuredClone(value));
    return Promise.resolve();
  }
  get(name: string): Promise<unknown> {
    return Promise.resolve(this.docs.get(name));
  }
  list(prefix: string): Promise<string[]> {
    return Promise.resolve([...this.docs.keys()].filter((k) => k.startsWith(prefix)));
  }
}

function barrier(store: BarrierStore, time: ManualTime, rank: number, worldSize: number, timeoutMs = 1000): FileBarrier {
  return new FileBarrier({
    store,
    rank,
    worldSize,
    host: `h${rank}`,
    pid: 100 + rank,
    timeoutMs,
    time: { wallNow: () => time.now(), sleep: time.sleep },
    where: '/shared/barrier',
    pollMs: 20,
  });
}

test('every rank gets rank 0’s decision once all have arrived', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  const results: unknown[] = [];
  const lead = barrier(store, time, 0, 3).meet<unknown>('start', (arrivals) => ({ seen: arrivals.length, at: time.now() }));
  const one = barrier(store, time, 1, 3).meet<unknown>('start', () => 'never used');
  void lead.then((d) => results.push(d.payload));
  void one.then((d) => results.push(d.payload));
  await settle();
  await time.advance(100);
  assert.equal(results.length, 0, 'rank 2 has not arrived');
  const two = barrier(store, time, 2, 3).meet<unknown>('start', () => 'never used');
  void two.then((d) => results.push(d.payload));
  await settle();
  await time.advance(60);
  assert.deepEqual(results, [
    { seen: 3, at: 120 },
    { seen: 3, at: 120 },
    { seen: 3, at: 120 },
  ]);
  const d = await one;
  assert.deepEqual(
    d.arrivals.map((a) => [a.rank, a.host, a.arrivedEpochMs]),
    [
      [0, 'h0', 0],
      [1, 'h1', 0],
      [2, 'h2', 100],
    ],
  );
});

test('a rank that never arrives: rank 0 fails after the timeout naming it, and the arrived rank fails with it at once', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  const errors: Array<[number, number, string, readonly number[]]> = [];
  const catchAt = (rank: number) => (e: unknown) => {
    assert.ok(e instanceof BarrierError);
    errors.push([rank, time.now(), e.message, e.missingRanks]);
  };
  void barrier(store, time, 0, 3, 1000)
    .meet('start', () => ({}))
    .catch(catchAt(0));
  void barrier(store, time, 1, 3, 5000)
    .meet('start', () => ({}))
    .catch(catchAt(1));
  await settle();
  await time.advance(990);
  assert.deepEqual(errors, []);
  await time.advance(60);
  const msg = "rank(s) 2 of 3 did not arrive at the 'start' barrier within 1 s (/shared/barrier)";
  assert.deepEqual(errors, [
    [0, 1000, msg, [2]],
    [1, 1020, `rank 0 gave up: ${msg}`, [2]],
  ]);
});

test('without rank 0 a rank fails after its own timeout; a directory holding an earlier decision is refused', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  let failedAt = -1;
  void barrier(store, time, 1, 2, 500)
    .meet('start', () => ({}))
    .catch(() => (failedAt = time.now()));
  await settle();
  await time.advance(600);
  assert.equal(failedAt, 500);
  await store.put('start.go', { arrivals: [], payload: {} });
  await assert.rejects(
    barrier(store, time, 0, 2).meet('start', () => ({})),
    /already holds the 'start' barrier of an earlier run/,
  );
});

test('ranks start at the agreed instant (last arrival + lead) and all stop at start + duration', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  const session = (rank: number): RankSession =>
    new RankSession({
      identity: { rank, worldSize: 2, launcher: 'openmpi', worldSizeFrom: 'OMPI_COMM_WORLD_SIZE' },
      barrierDir: '/shared/barrier',
      timeoutSec: 10,
      durationSec: 30,
      host: 'vm',
      pid: rank,
      time: { wallNow: () => time.now(), sleep: time.sleep },
      store,
    });
  const s0 = session(0);
  const s1 = session(1);
  const started: Array<[number, number]> = [];
  void s0.start().then(() => started.push([0, time.now()]));
  await settle();
  await time.advance(250);
  void s1.start().then(() => started.push([1, time.now()]));
  await settle();
  await time.advance(5000);
  // Rank 0 sees rank 1 at its poll after 250 ms (t = 260): start = 260 + lead.
  const agreed = 260 + START_LEAD_MS;
  assert.deepEqual(started, [
    [0, agreed],
    [1, agreed],
  ]);
  // The test advanced past the agreed start in one step: the window opens late by exactly that much.
  const late = time.now() - agreed;
  assert.equal(s0.windowOpened(), 30_000 - late);
  assert.equal(s1.windowOpened(), 30_000 - late);
  const ends = Promise.all([s0.end(2), s1.end(2)]);
  await settle();
  await time.advance(100);
  const [f0, f1] = await ends;
  for (const f of [f0, f1]) {
    assert.equal(f.agreedStartEpochMs, agreed);
    assert.equal(f.agreedEndEpochMs, agreed + 30_000);
    assert.equal(f.startSkewMs, late);
    assert.equal(f.windowEndEpochMs, agreed + late + 2000);
    assert.equal(f.barrier?.endProblem, null);
  }
  assert.deepEqual(
    f1.peers.map((p) => [p.rank, p.arrivedEpochMs]),
    [
      [0, 0],
      [1, 250],
    ],
  );
});

test('DirStore.put never writes through a link planted at the old predictable temp name', () =>
  withTempDir(async (dir) => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious');
    // Today's main wrote `.${name}.tmp-${pid}`: a colleague sharing the directory plants a link there.
    symlinkSync(victim, join(dir, '.start.arrive.rank_0.tmp-4242'));
    const store = new DirStore(dir, 4242);
    await store.put('start.arrive.rank_0', { rank: 0 });
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.deepEqual(await store.get('start.arrive.rank_0'), { rank: 0 });
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.includes('.tmp-') && n !== '.start.arrive.rank_0.tmp-4242'),
      [],
    );
  }));
