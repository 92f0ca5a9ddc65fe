// Request queue (docs/reference-compat.md#rc-23): priority, then scheduled time, then arrival order; ties never compare
// request objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { RequestQueue } from '../../src/workload/queue.js';

interface Item {
  readonly priority: number;
  readonly scheduledAtMs: number;
  readonly n: number;
}

test('queue: empty, peek, size', () => {
  const q = new RequestQueue<Item>();
  assert.equal(q.size, 0);
  assert.equal(q.pop(), undefined);
  assert.equal(q.peek(), undefined);
  q.push({ priority: 1, scheduledAtMs: 5, n: 0 });
  q.push({ priority: 3, scheduledAtMs: 9, n: 1 });
  assert.equal(q.size, 2);
  assert.equal(q.peek()?.n, 1);
  assert.equal(q.pop()?.n, 1);
  assert.equal(q.pop()?.n, 0);
  assert.equal(q.pop(), undefined);
  q.push({ priority: 1, scheduledAtMs: 5, n: 2 });
  q.clear();
  assert.equal(q.size, 0);
});

test('queue: full ties (same priority and time) come out in arrival order, never comparing items', () => {
  const q = new RequestQueue<Item>();
  for (let n = 0; n < 100; n++) q.push({ priority: 2, scheduledAtMs: 0, n });
  const out: number[] = [];
  for (let x = q.pop(); x !== undefined; x = q.pop()) out.push(x.n);
  assert.deepEqual(
    out,
    Array.from({ length: 100 }, (_, i) => i),
  );
});

test('queue: 10,000 random requests come out in the order of a stable sort', () => {
  const rng = new Rng(12);
  const items: Item[] = Array.from({ length: 10000 }, (_, n) => ({ priority: rng.int(1, 3), scheduledAtMs: rng.int(0, 50), n }));
  const q = new RequestQueue<Item>();
  const expected = [...items].sort((a, b) => b.priority - a.priority || a.scheduledAtMs - b.scheduledAtMs || a.n - b.n);
  // Interleave pushes and pops to exercise the heap in both directions.
  const out: Item[] = [];
  const pending = [...items];
  while (pending.length > 0) {
    for (const it of pending.splice(0, 1000)) q.push(it);
    for (let k = 0; k < 300; k++) {
      const x = q.pop();
      if (x !== undefined) out.push(x);
    }
  }
  for (let x = q.pop(); x !== undefined; x = q.pop()) out.push(x);
  assert.equal(out.length, 10000);
  // Popping early changes the order only across batches; check a pure run against the sort.
  const q2 = new RequestQueue<Item>();
  for (const it of items) q2.push(it);
  const all: number[] = [];
  for (let x = q2.pop(); x !== undefined; x = q2.pop()) all.push(x.n);
  assert.deepEqual(
    all,
    expected.map((e) => e.n),
  );
  assert.deepEqual(
    out.map((e) => e.n).sort((a, b) => a - b),
    items.map((e) => e.n),
  );
});
