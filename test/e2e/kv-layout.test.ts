// --kv-layout slab through the real command: a block-granular run stores its blocks in the pool's
// slots with no file created, renamed or removed per block (counted by strace over the whole run: the
// only creates and unlinks in the cache dir are the pool files' and the O_DIRECT probe's), the results
// carry the pool and the harness's CPU, and the pool is gone afterwards. And a full file system during
// the lay-out: exit 2, one message, nothing left behind (root: a 2 MiB tmpfs).
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

test(
  'a slab run: blocks in slots, no create, rename or unlink per block (strace), the pool and the CPU in the results',
  { skip: !hasStrace && 'needs strace' },
  () =>
    inTempDir(async (dir) => {
      const cache = join(dir, 'cache');
      mkdirSync(cache);
      const out = join(dir, 'out.json');
      const log = join(dir, 'strace.log');
      execFileSync(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=openat,creat,rename,renameat,renameat2,unlink,unlinkat,link,linkat,mkdir,mkdirat',
          '-o',
          log,
          process.execPath,
          BIN,
          ...SLAB_RUN,
          '--cache-dir',
          cache,
          '--output',
          out,
        ],
        { stdio: 'ignore' },
      );
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
