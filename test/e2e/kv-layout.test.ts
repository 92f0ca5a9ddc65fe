// --kv-layout slab and fanout through the real command. Slab: a block-granular run stores its blocks in the pool's
// slots with no file created, renamed or removed per block (counted by strace over the whole run: the
// only creates and unlinks in the cache dir are the pool files' and the O_DIRECT probe's), the results
// carry the pool and the harness's CPU, and the pool is gone afterwards. And a full file system during
// the lay-out: exit 2, one message, nothing left behind (root: a 2 MiB tmpfs). Fanout: each block is a
// create of a temporary name and a rename onto its fan-out name (strace), and nothing is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readValidResults } from '../report/validate-results.js';
import { BIN, QUICK_RUN, inTempDir, runCli } from './run-cli.js';

const hasStrace = spawnSync('sh', ['-c', 'command -v strace']).status === 0;
const SLAB_RUN = [
  ...QUICK_RUN,
  '--duration',
  '3',
  '--kv-block-tokens',
  '16',
  '--kv-layout',
  'slab',
  '--storage-capacity-gb',
  '0.05',
  '--seed',
  '5',
];

/** Runs the command under strace (the file-name system calls, every thread) with a fresh cache dir in `dir`. */
function straceRun(dir: string, run: readonly string[]): { cache: string; out: string; log: string; stdout: string } {
  const cache = join(dir, 'cache');
  mkdirSync(cache);
  const out = join(dir, 'out.json');
  const log = join(dir, 'strace.log');
  const calls = 'trace=openat,creat,rename,renameat,renameat2,unlink,unlinkat,link,linkat,mkdir,mkdirat';
  // --file-calls threads: io_uring makes these calls inside io_uring_enter, where strace cannot name them.
  const argv = [
    '-f',
    '-qq',
    '-e',
    calls,
    '-o',
    log,
    process.execPath,
    BIN,
    ...run,
    '--file-calls',
    'threads',
    '--cache-dir',
    cache,
    '--output',
    out,
  ];
  const stdout = execFileSync('strace', argv, { stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8', maxBuffer: 64 << 20 });
  return { cache, out, log, stdout };
}

test(
  'a slab run: blocks in slots, no create, rename or unlink per block (strace), the pool and the CPU in the results',
  { skip: !hasStrace && 'needs strace' },
  () =>
    inTempDir(async (dir) => {
      const { cache, out, log } = straceRun(dir, SLAB_RUN);
      const doc = await readValidResults(out);
      const slab = doc.kvcache_bench.slab;
      assert.ok(slab !== undefined);
      const inCache = readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes(`"${cache}/`) && !l.includes('= -1 '));
      const creates = inCache.filter((l) => l.includes('O_CREAT') || /\bcreat\(/.test(l)).map((l) => /"([^"]+)"/.exec(l)?.[1] ?? '');
      const pool = creates.filter((p) => /\/kvc-[0-9a-f]{8}-slab-\d{4}\.bin$/.test(p));
      assert.equal(pool.length, slab.files, 'one create per pool file');
      assert.equal(slab.file_creates, slab.files);
      // Everything else created in the cache dir is the aligned-buffer probes' scratch file (data/aligned.ts), never an entry.
      assert.deepEqual(
        creates.filter((p) => !pool.includes(p) && !p.includes('/.kvcache-align-probe-')),
        [],
        `creates other than the pool's: ${creates.join(', ')}`,
      );
      assert.deepEqual(
        inCache.filter((l) => /^\d+\s+(rename|link|mkdir)/.test(l)),
        [],
      );
      const unlinks = inCache.filter((l) => /^\d+\s+unlink/.test(l) && /slab-\d{4}\.bin/.test(l));
      assert.equal(unlinks.length, slab.files, 'the pool removed once, at the end');
      assert.ok(slab.slots_freed > 0 && doc.kvcache_bench.kv_blocks !== undefined, 'blocks were evicted: slots freed, no unlink for them');
      assert.deepEqual(
        [doc.kvcache_bench.metadata_ops?.total, doc.kvcache_bench.metadata_ops?.failed],
        [0, 0],
        'no metadata call in the measured window: the pool files were made before it',
      );
      assert.equal(slab.slot_bytes, 16 * 24576);
      assert.equal(slab.lay_out_bytes, slab.pool_bytes);
      const cpu = doc.kvcache_bench.cpu_seconds;
      assert.ok(cpu !== undefined);
      assert.equal(cpu.total, cpu.user + cpu.system);
      const moved = doc.kvcache_bench.storage_bytes.read_bytes + doc.kvcache_bench.storage_bytes.written_bytes;
      assert.equal(cpu.gib_moved, moved / 2 ** 30);
      assert.deepEqual(readdirSync(cache), []);
    }),
);

test(
  'a fanout run: each block a create of its temporary name and a rename onto <3 hex>/<2 hex>/<40 hex>.bin; no link; nothing left',
  { skip: !hasStrace && 'needs strace' },
  () =>
    inTempDir(async (dir) => {
      const { cache, out, log, stdout } = straceRun(
        dir,
        // Room under the tier's limit left at the end for the calibration among the run's entries (a full
        // tier skips it): a 3 s run under strace writes ~0.2 GiB here.
        SLAB_RUN.map((a) => (a === 'slab' ? 'fanout' : a === '0.05' ? '2' : a)),
      );
      const doc = await readValidResults(out);
      assert.equal(doc.kvcache_bench.storage_layout, 'fanout');
      // Before the window, files made as the layout makes them measured the file system's own bytes (on a block device).
      const cal = doc.kvcache_bench.metadata_calibration;
      // A calibration another writer disturbed before the window (CI's other tests) is not made again after it.
      if (cal?.disturbed === true) assert.equal(cal.after_window, null);
      else if (cal !== undefined) {
        assert.deepEqual([cal.layout, cal.rounds_bytes_per_file.length], ['fanout', 3]);
        // ...and after it among the run's own entries, at fan-out paths named apart from blocks.
        const said = stdout
          .split('\n')
          .filter((l) => l.startsWith('File-system metadata'))
          .join('\n');
        assert.equal(cal.after_window?.rounds_bytes_per_file.length, 3, said);
        const calFiles = readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.includes('O_CREAT') && l.includes('.kvc-cal-'))
          .map((l) => /"([^"]+)"/.exec(l)?.[1] ?? '');
        assert.equal(calFiles.length, 3 * 128);
        for (const f of calFiles)
          assert.match(
            f,
            new RegExp(`^${cache}/kvfan-[0-9a-f]{8}/[0-9a-f]{3}/[0-9a-f]{2}/[0-9a-f]{40}\\.bin\\.kvc-cal-[0-9a-f]{8}-[0-2]-\\d+\\.tmp$`),
          );
      }
      const ok = readFileSync(log, 'utf8')
        .split('\n')
        // The calibrations' own files: a scratch directory before the window, `…kvc-cal-…` names among the entries after it.
        .filter((l) => l.includes(`"${cache}/`) && !l.includes('= -1 ') && !l.includes('/.kvc-calibrate-') && !l.includes('.kvc-cal-'));
      const block = new RegExp(`^${cache}/kvfan-([0-9a-f]{8})/[0-9a-f]{3}/[0-9a-f]{2}/[0-9a-f]{40}\\.bin$`);
      const temps = ok
        .filter((l) => l.includes('O_CREAT'))
        .map((l) => /"([^"]+)"/.exec(l)?.[1] ?? '')
        .filter((p) => !p.includes('/.kvcache-align-probe-'));
      const renames = ok.filter((l) => /^\d+\s+rename/.test(l)).map((l) => [...l.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? ''));
      assert.ok(renames.length > 0);
      for (const [from, to] of renames) {
        assert.match(to ?? '', block, 'renamed onto a fan-out block name');
        assert.ok(from?.startsWith(`${to}.tmp-`), `renamed from its own temporary name: ${from}`);
      }
      for (const t of temps) assert.match(t, /\.bin\.tmp-[0-9a-f]{8}-\d+$/, 'every create is a temporary name');
      // A write cut at the end of the run created its temporary name and never renamed it.
      assert.ok(
        temps.length >= renames.length && temps.length - renames.length <= 16,
        `${temps.length} creates, ${renames.length} renames`,
      );
      assert.ok((doc.kvcache_bench.latency_histograms.storage_write?.count ?? 0) <= renames.length);
      assert.deepEqual(
        ok.filter((l) => /^\d+\s+link/.test(l)),
        [],
      );
      // The measured window's own calls (metadata_ops): one rename per block written in it, an unlink per eviction at least.
      const m = doc.kvcache_bench.metadata_ops;
      assert.ok(m !== undefined);
      const h = doc.kvcache_bench.latency_histograms;
      assert.equal(m.rename.count, (h.storage_write?.count ?? 0) + (h.storage_demote_write?.count ?? 0), 'a rename per block written');
      assert.ok(m.rename.count > 0 && m.rename.count <= renames.length && m.create.count >= m.rename.count);
      assert.ok(m.unlink.count >= doc.summary.cache_stats.tier_storage_evict_delete_ops);
      assert.deepEqual([m.link.count, m.lookup.count, m.failed], [0, 0, 0]);
      assert.equal(m.total, m.create.count + m.rename.count + m.unlink.count + m.mkdir.count);
      assert.deepEqual(readdirSync(cache), [], "blocks, temporaries, directories and the calibration's scratch removed");
    }),
);

const isRoot = process.getuid?.() === 0;

test(
  'a full file system during the lay-out: exit 2, one message naming the flag, nothing left behind',
  { skip: !isRoot && 'needs root (a 2 MiB tmpfs)' },
  () =>
    inTempDir(async (dir) => {
      const cache = join(dir, 'cache');
      mkdirSync(cache);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', cache]);
      try {
        const out = join(dir, 'out.json');
        const r = await runCli([...SLAB_RUN, '--cache-dir', cache, '--output', out]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(
          r.stderr,
          /--kv-layout slab: the pool \(0\.05 GiB in 4 files\) does not fit in .*: the file system was full \(ENOSPC\)/,
        );
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
        assert.deepEqual(readdirSync(cache), []);
        assert.equal(existsSync(out), false);
      } finally {
        spawnSync('umount', [cache]);
      }
    }),
);
