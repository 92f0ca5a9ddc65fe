// --kv-layout fanout (issue 34): one file per entry under the run's own hash fan-out directories, each
// written to a temporary name and renamed into place; the metadata calls of every file layout counted
// exactly (n new blocks: n creates + n renames on fanout; creates and unlinks on flat; link and the
// temporary's unlink in a shared pool); a killed run's namespace reported and removed on request; a
// force-quit removing the run's own tree; nothing of anyone else touched.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { DirectSlabs } from '../../src/data/aligned.js';
import { removeEntryFilesSync } from '../../src/engine/entry-cleanup.js';
import { FileBackend } from '../../src/tiers/file.js';
import { FILE_STORAGE } from '../../src/tiers/file-kind.js';
import type { MetadataOp, MetadataOpSink } from '../../src/tiers/metadata-ops.js';
import { fanoutNamespace, poolBlockName, poolNamespace } from '../../src/tiers/pool-names.js';
import { ManualClock } from '../../src/util/clock.js';
import { withTempDir } from '../util/temp-dir.js';

const RUN = '0000f00d';

function sourceOf(bytes: Buffer): ChunkSource {
  return {
    size: bytes.length,
    async *chunks() {
      yield bytes;
    },
  };
}

const bytesOf = (key: string, size: number): Buffer => Buffer.alloc(size, key);

/** A sink that counts successful and failed calls per class. */
function tally(): { sink: MetadataOpSink; ok: Map<MetadataOp, number>; failed: Map<MetadataOp, number> } {
  const ok = new Map<MetadataOp, number>();
  const failed = new Map<MetadataOp, number>();
  const sink: MetadataOpSink = (op, ms, done) => {
    assert.ok(ms >= 0 && Number.isFinite(ms));
    const m = done ? ok : failed;
    m.set(op, (m.get(op) ?? 0) + 1);
  };
  return { sink, ok, failed };
}

const counts = (m: Map<MetadataOp, number>): Record<string, number> => Object.fromEntries([...m].sort());

/** Files under `dir`, relative, recursively. */
function filesUnder(dir: string, rel = ''): string[] {
  if (!existsSync(join(dir, rel))) return [];
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesUnder(dir, join(rel, d.name)) : [join(rel, d.name)],
  );
}

test('fanout: n new blocks make n creates and n renames, one mkdir per new fan-out directory; reads see the bytes; close leaves nothing', async () => {
  await withTempDir(async (dir) => {
    const t = tally();
    const ns = fanoutNamespace(RUN);
    const b = await FileBackend.create({ dir, ioMode: 'buffered', runId: RUN, fanout: { namespace: ns }, metadataOps: t.sink });
    const keys = Array.from({ length: 40 }, (_, i) => `user_${i % 7}_block_${i}`);
    for (const k of keys) await b.write(k, sourceOf(bytesOf(k, 5000 + k.length)));
    // Each block's name is the shared pool's naming in the run's own namespace.
    for (const k of keys) assert.equal(b.pathFor(k), join(dir, poolBlockName(ns, k)));
    const leaves = new Set(keys.map((k) => dirname(b.pathFor(k))));
    const level1 = new Set([...leaves].map((d) => dirname(d)));
    assert.deepEqual(counts(t.ok), { create: 40, mkdir: leaves.size + level1.size, rename: 40 });
    assert.equal(t.failed.size, 0);
    const onDisk = filesUnder(dir).sort();
    assert.deepEqual(onDisk, keys.map((k) => poolBlockName(ns, k)).sort(), 'only final names: no temporary file is left');
    for (const k of keys) {
      const parts: Buffer[] = [];
      const r = await b.read(k, (c) => void parts.push(Buffer.from(c)));
      assert.equal(r.bytes, 5000 + k.length);
      assert.ok(Buffer.concat(parts).equals(bytesOf(k, 5000 + k.length)));
    }
    // A rewrite of a block it holds is another create and rename (a new temporary name), no mkdir.
    await b.write(keys[0] ?? '', sourceOf(bytesOf('again', 100)));
    assert.deepEqual(counts(t.ok), { create: 41, mkdir: leaves.size + level1.size, rename: 41 });
    for (const k of keys.slice(0, 10)) await b.delete(k);
    assert.equal(t.ok.get('unlink'), 10);
    assert.equal(b.fanoutDir, join(dir, ns));
    await b.close();
    assert.deepEqual(readdirSync(dir), [], 'the blocks, their directories and the namespace are gone');
  });
});

test('fanout: two blocks of one new leaf written at once make its directories once each (one mkdir per level, none failed)', async () => {
  await withTempDir(async (dir) => {
    const ns = fanoutNamespace(RUN);
    // Two keys whose names share a level-2 directory (a birthday search among 2^20 leaves).
    const leafOf = (key: string): string => dirname(poolBlockName(ns, key));
    const seen = new Map<string, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; pair === undefined; i++) {
      const key = `k${i}`;
      const other = seen.get(leafOf(key));
      if (other !== undefined) pair = [other, key];
      else seen.set(leafOf(key), key);
    }
    const t = tally();
    const b = await FileBackend.create({ dir, ioMode: 'buffered', runId: RUN, fanout: { namespace: ns }, metadataOps: t.sink });
    try {
      await Promise.all(pair.map((key) => b.write(key, sourceOf(bytesOf(key, 5000)))));
      assert.deepEqual([...t.failed], [], 'no mkdir met EEXIST: the second writer waited for the first');
      assert.equal(t.ok.get('mkdir'), 2, 'each level made once');
      for (const key of pair) assert.ok((await readFile(b.pathFor(key))).equals(bytesOf(key, 5000)));
    } finally {
      await b.close();
    }
  });
});

test("fanout: an existing namespace directory is never used (another writer's); nothing is removed", async () => {
  await withTempDir(async (dir) => {
    const ns = fanoutNamespace(RUN);
    mkdirSync(join(dir, ns));
    writeFileSync(join(dir, ns, 'theirs.txt'), 'x');
    await assert.rejects(
      FileBackend.create({ dir, ioMode: 'buffered', runId: RUN, fanout: { namespace: ns } }),
      /refusing to use '.*kvfan-0000f00d' for this run's fan-out directories: it exists already/,
    );
    assert.equal(await readFile(join(dir, ns, 'theirs.txt'), 'utf8'), 'x');
  });
});

test('flat: a new entry file is a create and an eviction an unlink; rewriting an entry it holds is no create', async () => {
  await withTempDir(async (dir) => {
    const t = tally();
    const b = await FileBackend.create({ dir, ioMode: 'buffered', metadataOps: t.sink });
    for (let i = 0; i < 5; i++) await b.write(`e${i}`, sourceOf(bytesOf('a', 4096)));
    await b.write('e0', sourceOf(bytesOf('b', 4096)));
    await b.delete('e1');
    await b.delete('e1'); // not held any more: nothing asked of the file system
    assert.deepEqual(counts(t.ok), { create: 5, unlink: 1 });
    writeFileSync(join(dir, 'planted.bin'), 'x');
    await b.close();
  });
});

test('shared pool: a publish is a create, a link and the temporary name’s unlink; a lookup is counted found or not; a lost race is a failed link', async () => {
  await withTempDir(async (dir) => {
    const ns = poolNamespace({ model: 'm', blockTokens: 16, bytesPerToken: 2 });
    const ta = tally();
    const tb = tally();
    const a = await FileBackend.create({ dir, ioMode: 'buffered', pool: { namespace: ns, keep: false }, metadataOps: ta.sink });
    const b = await FileBackend.create({ dir, ioMode: 'buffered', pool: { namespace: ns, keep: false }, metadataOps: tb.sink });
    await a.write('k1', sourceOf(bytesOf('k1', 3000)));
    assert.deepEqual(counts(ta.ok), { create: 1, link: 1, mkdir: 2, unlink: 1 });
    assert.equal((await b.pool?.lookup('k1'))?.found, true);
    assert.equal((await b.pool?.lookup('k2'))?.found, false);
    await assert.rejects(b.write('k1', sourceOf(bytesOf('k1', 3000))), /already published/);
    assert.deepEqual(counts(tb.ok), { create: 1, lookup: 2, unlink: 1 });
    assert.deepEqual(counts(tb.failed), { link: 1, mkdir: 2 }, 'EEXIST: the directories and the block were there already');
    await a.close();
    await b.close();
  });
});

const OPTIONS = { ioMode: 'buffered', chunkBytes: 1 << 20, stagingSlots: 2, directSlabs: new DirectSlabs(), fanout: true } as const;

test("fanout kind: a killed run's namespace is reported, then removed on request with its directories; other files stay", async () => {
  await withTempDir(async (dir) => {
    const old = fanoutNamespace('0000abcd');
    const blockRel = poolBlockName(old, 'k');
    mkdirSync(dirname(join(dir, blockRel)), { recursive: true });
    writeFileSync(join(dir, blockRel), Buffer.alloc(6000));
    writeFileSync(join(dir, `${blockRel}.tmp-0000abcd-3`), Buffer.alloc(100));
    writeFileSync(join(dir, old, 'notes.txt'), 'not ours');
    const f = await FILE_STORAGE.open({ ...OPTIONS, dir });
    try {
      assert.equal(f.description.layout, 'fanout');
      assert.equal(f.keyFits?.('é'.repeat(500)), true, 'fan-out names are hashes: every key fits');
      const kept = await f.leftovers(false);
      assert.equal(kept.found?.count, 2);
      assert.equal(kept.found?.bytes, 6100);
      assert.equal(kept.found?.removed, 0);
      assert.match(kept.warnings.join('\n'), /held 1 fan-out directory of earlier runs \(kvfan-<run id>\/, 2 block file\(s\)/);
      assert.equal(existsSync(join(dir, blockRel)), true);
      const removed = await f.leftovers(true);
      assert.equal(removed.found?.removed, 2);
      assert.equal(existsSync(join(dir, blockRel)), false);
      assert.equal(existsSync(dirname(join(dir, blockRel))), false, 'the empty fan-out levels went too');
      assert.equal(
        await readFile(join(dir, old, 'notes.txt'), 'utf8'),
        'not ours',
        'a file not named as a block stays, and so does its directory',
      );
    } finally {
      await f.backend.close();
    }
    assert.deepEqual(readdirSync(dir).sort(), [old]);
  });
});

test("force-quit: the run's own fan-out tree goes (blocks, temporaries, directories); another run's namespace stays", async () => {
  await withTempDir(async (dir) => {
    const b = await FileBackend.create({ dir, ioMode: 'buffered', runId: RUN, fanout: { namespace: fanoutNamespace(RUN) } });
    for (let i = 0; i < 12; i++) await b.write(`k${i}`, sourceOf(bytesOf('z', 2000)));
    writeFileSync(`${b.pathFor('k0')}.tmp-${RUN}-99`, 'half a block');
    const other = poolBlockName(fanoutNamespace('0000abcd'), 'x');
    mkdirSync(dirname(join(dir, other)), { recursive: true });
    writeFileSync(join(dir, other), 'theirs');
    const r = removeEntryFilesSync({ dir, runId: RUN, ownsDir: false, fanout: fanoutNamespace(RUN) }, new ManualClock());
    assert.equal(r.removed, 13);
    assert.deepEqual(r.left, []);
    assert.deepEqual(readdirSync(dir), [fanoutNamespace('0000abcd')]);
    assert.equal(await readFile(join(dir, other), 'utf8'), 'theirs');
    await b.close(); // its files are gone already: nothing to do, no error
  });
});
