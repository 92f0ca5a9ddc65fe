// The entry table: per-tier LRU lists behind the metas it hands out (entries.ts). A meta is the table's
// own list node, so touching, refreshing or moving one a caller holds must act on the table exactly as
// a lookup by key would, and one no longer in the table must not reach into the lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EntryTable } from '../../src/cache/entries.js';
import type { EntryMeta } from '../../src/cache/entries.js';
import type { TierName } from '../../src/tiers/backend.js';

function table(keys: readonly string[], tier: TierName = 'storage'): EntryTable {
  const t = new EntryTable(['cpu', 'storage']);
  for (const key of keys) t.insert({ key, tier, size: 10, lastAccess: 0, accessCount: 1 });
  return t;
}

const order = (t: EntryTable, tier: TierName): string[] => [...t.keysIn(tier)];

test('insert copies the meta; get returns the table’s own, which touch and refresh make newest', () => {
  const mine: EntryMeta = { key: 'a', tier: 'storage', size: 10, lastAccess: 0, accessCount: 1 };
  const t = table([]);
  t.insert(mine);
  t.insert({ key: 'b', tier: 'storage', size: 20, lastAccess: 0, accessCount: 1 });
  const a = t.get('a');
  assert.ok(a !== undefined && a !== mine, 'the table keeps its own record');
  t.touch(a, 5);
  assert.equal(a.lastAccess, 5);
  assert.equal(a.accessCount, 2);
  assert.equal(mine.accessCount, 1, "the caller's object is left alone");
  assert.deepEqual(order(t, 'storage'), ['b', 'a']);
  t.refresh(mine); // a meta that is not the table's: found by its key, as before
  assert.deepEqual(order(t, 'storage'), ['b', 'a']);
  const b = t.get('b');
  assert.ok(b !== undefined);
  t.refresh(b);
  assert.deepEqual(order(t, 'storage'), ['a', 'b']);
  assert.equal(t.residentBytes('storage'), 30);
});

test('a meta removed from the table: refresh is a no-op, or reaches the entry now under its key; move throws', () => {
  const t = table(['a', 'b', 'c']);
  const held = t.get('a');
  assert.ok(held !== undefined);
  assert.equal(t.remove('a'), held);
  t.refresh(held);
  assert.deepEqual(order(t, 'storage'), ['b', 'c'], 'nothing relinked');
  assert.equal(t.count('storage'), 2);
  assert.throws(() => t.move(held, 'cpu'), /not in the table/);
  t.insert({ key: 'a', tier: 'storage', size: 10, lastAccess: 0, accessCount: 1 });
  t.refresh(t.get('b') ?? held);
  assert.deepEqual(order(t, 'storage'), ['c', 'a', 'b']);
  t.refresh(held); // the old record: the new entry under its key is refreshed
  assert.deepEqual(order(t, 'storage'), ['c', 'b', 'a']);
});

test('move takes a held meta to the other tier as its newest, with its bytes', () => {
  const t = table(['a', 'b']);
  t.insert({ key: 'x', tier: 'cpu', size: 10, lastAccess: 0, accessCount: 1 });
  const a = t.get('a');
  assert.ok(a !== undefined);
  t.move(a, 'cpu');
  assert.equal(a.tier, 'cpu');
  assert.equal(t.get('a')?.tier, 'cpu');
  assert.deepEqual(order(t, 'cpu'), ['x', 'a']);
  assert.deepEqual(order(t, 'storage'), ['b']);
  assert.equal(t.residentBytes('cpu'), 20);
  assert.equal(t.residentBytes('storage'), 10);
});
