import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { arrivalProblem, BarrierError, DirStore, FileBarrier } from '../../src/engine/barrier.js';
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

test('a forged arrival an hour ahead is refused, naming the file, instead of moving the start an hour', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  await store.put('start.arrive.rank_1', { rank: 1, host: 'h1', pid: 7, arrivedEpochMs: time.now() + 3_600_000 });
  await assert.rejects(
    barrier(store, time, 0, 2, 1000).meet('start', () => ({})),
    new BarrierError(
      'the barrier file start.arrive.rank_1.json in /shared/barrier is not a valid arrival (its arrival time is 3600.0 s from now, beyond what a --barrier-timeout of 1 s allows); is another program writing into that directory?',
    ),
  );
});

test('every field of an arrival is checked: rank against its name and the world, host, pid, time', () => {
  const ok = { rank: 1, host: 'node-1.example', pid: 42, arrivedEpochMs: 10_000 };
  const problem = (doc: unknown, rank = 1): string | undefined => arrivalProblem(doc, rank, 2, 10_000, 1000);
  assert.equal(problem(ok), undefined);
  assert.equal(problem([1]), 'not a JSON object');
  assert.equal(problem({ ...ok, rank: 0 }), 'its rank is not 1, the rank its name says');
  assert.equal(problem({ ...ok, rank: 5 }, 5), 'rank 5 is outside the world of 2 rank(s)');
  assert.equal(problem({ ...ok, host: 'h\n\u001b]52;c;aWQ=\u0007' }), 'its host is not a host name (one line of 1 to 255 characters)');
  assert.equal(problem({ ...ok, host: 'x'.repeat(256) }), 'its host is not a host name (one line of 1 to 255 characters)');
  assert.equal(problem({ ...ok, pid: 1.5 }), 'its pid is not a process id');
  assert.equal(problem({ ...ok, arrivedEpochMs: '10000' }), 'its arrival time is not a number');
  assert.equal(problem({ ...ok, arrivedEpochMs: 11_000 }), undefined);
  assert.equal(problem({ ...ok, arrivedEpochMs: 8_000 }), undefined);
  assert.match(problem({ ...ok, arrivedEpochMs: 7_999 }) ?? '', /is -2\.0 s from now/);
});

test('a forged decision (a start far ahead, a foreign host) is refused by the follower', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  const met = barrier(store, time, 1, 2).meet('start', () => ({}));
  await settle();
  await store.put('start.go', {
    arrivals: [
      { rank: 0, host: 'h0', pid: 1, arrivedEpochMs: 0 },
      { rank: 1, host: 'evil\u001b[2K', pid: 2, arrivedEpochMs: 0 },
    ],
    payload: {},
  });
  const failed = assert.rejects(met, /not a valid decision \(arrival of rank 1: its host is not a host name/);
  await time.advance(20);
  await failed;
});

test('an abort written by someone else: its message is shown inert and its ranks bounded by the world', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  await store.put('start.abort', { message: 'x\u001b]52;c;aWQ=\u0007', missing: [1, 99, -1, 'a'] });
  await assert.rejects(
    barrier(store, time, 1, 2).meet('start', () => ({})),
    (e: unknown) => {
      assert.ok(e instanceof BarrierError);
      assert.equal(e.message, 'rank 0 gave up: x\\e]52;c;aWQ=\\x07');
      assert.deepEqual(e.missingRanks, [1]);
      return true;
    },
  );
});

test('DirStore: a FIFO named like an arrival is refused at once (never waited on)', () =>
  withTempDir(async (dir) => {
    execFileSync('mkfifo', [join(dir, 'start.arrive.rank_1.json')]);
    const store = new DirStore(dir, 1);
    await assert.rejects(
      store.get('start.arrive.rank_1'),
      new BarrierError(`cannot read the barrier file ${join(dir, 'start.arrive.rank_1.json')}: is a FIFO (named pipe), not a regular file`),
    );
    symlinkSync('/etc/hostname', join(dir, 'start.go.json'));
    await assert.rejects(store.get('start.go'), /is a symbolic link \(not followed\)/);
  }));

test('RankSession: an agreed start further off than the timeout is refused, not slept on', async () => {
  const time = new ManualTime();
  const store = new MemoryStore();
  const s1 = new RankSession({
    identity: { rank: 1, worldSize: 2, launcher: 'openmpi', worldSizeFrom: 'OMPI_COMM_WORLD_SIZE' },
    barrierDir: '/shared/barrier',
    timeoutSec: 10,
    durationSec: 30,
    host: 'h1',
    pid: 2,
    time: { wallNow: () => time.now(), sleep: time.sleep },
    store,
  });
  const started = s1.start();
  await settle();
  await store.put('start.go', {
    arrivals: [
      { rank: 0, host: 'h0', pid: 1, arrivedEpochMs: 0 },
      { rank: 1, host: 'h1', pid: 2, arrivedEpochMs: 0 },
    ],
    payload: { startEpochMs: 3_600_000, endEpochMs: 3_630_000 },
  });
  const failed = assert.rejects(started, /the agreed start in the barrier directory is not one rank 0 could have decided/);
  await time.advance(20);
  await failed;
});

test('inTurns: the ranks of a host work one at a time in rank order, hosts at once; a failed work still takes its turns', async () => {
  const store = new MemoryStore();
  const hosts = ['a', 'a', 'b', 'a'];
  const spans: Array<{ rank: number; from: number; to: number }> = [];
  const work = (rank: number) => async (): Promise<number> => {
    const from = performance.now();
    await new Promise((r) => setTimeout(r, 60));
    spans.push({ rank, from, to: performance.now() });
    if (rank === 1) throw new Error('rank 1 could not calibrate');
    return rank * 10;
  };
  const outcomes = await Promise.allSettled(
    hosts.map((host, rank) =>
      new RankSession({
        identity: { rank, worldSize: hosts.length, launcher: 'openmpi', worldSizeFrom: 'OMPI_COMM_WORLD_SIZE' },
        barrierDir: '/shared/barrier',
        timeoutSec: 10,
        durationSec: 30,
        host,
        pid: rank,
        store,
      }).inTurns('calibrate-before', work(rank)),
    ),
  );
  assert.deepEqual(
    outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
    [0, 'rank 1 could not calibrate', 20, 30],
  );
  const span = (rank: number) => spans.find((s) => s.rank === rank) ?? assert.fail(`rank ${rank} never worked`);
  // Host a: 0, then 1, then 3, none overlapping; host b's rank 2 works in the first turn, beside rank 0.
  assert.ok(span(0).to <= span(1).from && span(1).to <= span(3).from, JSON.stringify(spans));
  assert.ok(span(2).from < span(0).to && span(0).from < span(2).to, 'hosts take their turns at once');
  // One meeting, then one per turn (host a has three ranks).
  assert.deepEqual([...store.docs.keys()].filter((k) => k.endsWith('.go')).sort(), [
    'calibrate-before-turn-0.go',
    'calibrate-before-turn-1.go',
    'calibrate-before-turn-2.go',
    'calibrate-before.go',
  ]);
});

test('inTurns: a world of one rank just works, with no barrier', async () => {
  const s = new RankSession({
    identity: { rank: 0, worldSize: 1, launcher: 'none', worldSizeFrom: 'none' },
    barrierDir: undefined,
    timeoutSec: 10,
    durationSec: 30,
    host: 'vm',
    pid: 1,
  });
  assert.equal(await s.inTurns('calibrate-after', () => Promise.resolve(7)), 7);
});
