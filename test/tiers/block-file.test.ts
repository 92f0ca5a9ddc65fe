// The native block-file jobs (tiers/block-file.ts, native/block-io.c), on both engines (io_uring and
// the helper's threads): one job per small file, each call timed where it is made; Node's error shapes
// with the step that failed; a closed pool; more jobs than the ring has entries; the file tier's use of
// them for one-chunk entries (metadata counts, timing, a refused overwrite); and a process that exits
// with jobs in flight (no thread may write into freed buffers); the engine --file-calls picks.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  constants as fsc,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import type { ChunkSource } from '../../src/data/chunk-source.js';
import { AlignedSlab } from '../../src/data/aligned.js';
import { BlockFileError, BlockFiles, blockFilesFor, fileCallsOf } from '../../src/tiers/block-file.js';
import type { BlockEngine, BlockIoHelper, BlockRead, BlockWrite } from '../../src/tiers/block-file.js';
import { StorageSetupError } from '../../src/tiers/storage-kind.js';
import { FileBackend, ForeignFileError } from '../../src/tiers/file.js';
import type { MetadataOp } from '../../src/tiers/metadata-ops.js';
import { fanoutNamespace } from '../../src/tiers/pool-names.js';
import { loadNativeHelper } from '../../src/util/native-helper.js';
import { withTempDir } from '../util/temp-dir.js';

/** Why `engine` cannot run here (printed as the skip's reason), or false. */
function skipOf(engine: BlockEngine): string | false {
  const loaded = BlockFiles.load(2, engine);
  if (typeof loaded === 'string') return `${engine}: ${loaded}`;
  loaded.close();
  return false;
}
const ENGINES = (['io_uring', 'threads'] as const).map((engine) => ({ engine, skip: skipOf(engine) }));
const SKIP = ENGINES[1]?.skip ?? false; // the helper itself not built

/** A pool of `threads` on `engine`, closed when `body` ends. */
async function withJobs<T>(threads: number, body: (jobs: BlockFiles) => Promise<T>, engine: BlockEngine = 'threads'): Promise<T> {
  const jobs = BlockFiles.load(threads, engine);
  if (typeof jobs === 'string') throw new Error(jobs);
  assert.equal(jobs.engine, engine);
  try {
    return await body(jobs);
  } finally {
    jobs.close();
  }
}

/** An O_DIRECT-ready buffer of `n` bytes (the probe decides; buffered flags otherwise). */
function aligned(dir: string, n: number): { buf: Uint8Array; direct: number } {
  const { slab, direct } = AlignedSlab.create(n, dir);
  return { buf: slab.view(0, n), direct: direct ? fsc.O_DIRECT : 0 };
}

const NEW = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL;

for (const { engine, skip } of ENGINES) {
  test(
    `${engine}: a write job: open, write, ftruncate, fsync, close, rename — bytes and size exact, each call timed`,
    { skip },
    async () => {
      await withTempDir(async (dir) => {
        await withJobs(
          2,
          async (jobs) => {
            const { buf, direct } = aligned(dir, 8192);
            for (let i = 0; i < buf.length; i++) buf[i] = (i * 7) & 0xff;
            const temp = join(dir, 'b.tmp');
            const final = join(dir, 'b.bin');
            const times = await jobs.write({
              path: temp,
              flags: NEW | direct,
              mode: 0o600,
              data: buf,
              truncateTo: 5000,
              sync: true,
              renameTo: final,
            });
            assert.equal(times.bytes, 8192);
            for (const [name, ms] of Object.entries(times) as Array<[string, number]>)
              assert.ok(Number.isFinite(ms) && ms >= 0, `${name} ${ms}`);
            assert.ok(times.dataMs > 0 && times.syncMs > 0 && times.truncateMs > 0 && times.renameMs > 0, JSON.stringify(times));
            assert.equal(existsSync(temp), false);
            assert.equal(statSync(final).size, 5000);
            assert.equal(statSync(final).mode & 0o777, 0o600);
            assert.deepEqual(readFileSync(final), Buffer.from(buf.subarray(0, 5000)));

            const into = aligned(dir, 8192).buf;
            const read = await jobs.read({ path: final, flags: fsc.O_RDONLY | direct, into, expectSize: 5000 });
            assert.equal(read.bytes, 5000, 'a read stops at the end of the file');
            assert.deepEqual(Buffer.from(into.subarray(0, 5000)), Buffer.from(buf.subarray(0, 5000)));
            assert.equal(read.syncMs + read.renameMs + read.truncateMs, 0, 'a read makes no other call');
          },
          engine,
        );
      });
    },
  );

  test(
    `${engine}: a failed job rejects as Node's fs would (code, errno, syscall, path) and names its step; what it opened is closed`,
    { skip },
    async () => {
      await withTempDir(async (dir) => {
        await withJobs(
          2,
          async (jobs) => {
            const data = new Uint8Array(100);
            const there = join(dir, 'there.bin');
            writeFileSync(there, 'x'.repeat(10));
            const failure = async (p: Promise<unknown>): Promise<BlockFileError> => {
              const e = await p.then(
                () => assert.fail('expected a rejection'),
                (x: unknown) => x,
              );
              assert.ok(e instanceof BlockFileError, String(e));
              return e;
            };
            const exists = await failure(jobs.write({ path: there, flags: NEW, mode: 0o644, data, sync: false }));
            assert.deepEqual([exists.code, exists.errno, exists.syscall, exists.path, exists.step], ['EEXIST', -17, 'open', there, 'open']);
            assert.match(exists.message, /^EEXIST: .*, open '.*there\.bin'$/);
            assert.equal(readFileSync(there, 'utf8'), 'x'.repeat(10), 'an exclusive open never touches the file');

            const gone = join(dir, 'gone.bin');
            writeFileSync(gone, 'z');
            assert.equal((await jobs.unlink(gone)).bytes, 0);
            assert.equal(existsSync(gone), false, 'an unlink job removes the file');
            const unlinked = await failure(jobs.unlink(gone));
            assert.deepEqual([unlinked.code, unlinked.syscall, unlinked.path, unlinked.step], ['ENOENT', 'unlink', gone, 'unlink']);

            const made = join(dir, 'made');
            assert.equal((await jobs.mkdir(made, 0o750)).bytes, 0);
            const reference = join(dir, 'reference');
            mkdirSync(reference, { mode: 0o750 });
            assert.ok(statSync(made).isDirectory(), 'a mkdir job makes the directory');
            assert.equal(statSync(made).mode & 0o777, statSync(reference).mode & 0o777, 'with its mode, less the umask (as fs.mkdirSync)');
            const twice = await failure(jobs.mkdir(made, 0o750));
            assert.deepEqual([twice.code, twice.errno, twice.syscall, twice.path, twice.step], ['EEXIST', -17, 'mkdir', made, 'mkdir']);
            const orphan = await failure(jobs.mkdir(join(dir, 'no', 'parent'), 0o755));
            assert.deepEqual([orphan.code, orphan.step], ['ENOENT', 'mkdir']);

            const linked = join(made, 'linked.bin');
            assert.equal((await jobs.link(there, linked)).bytes, 0);
            assert.equal(statSync(linked).ino, statSync(there).ino, 'a link job makes a hard link');
            const clobber = await failure(jobs.link(gone, linked));
            assert.deepEqual(
              [clobber.code, clobber.syscall, clobber.path, clobber.step],
              ['ENOENT', 'link', `${gone}' -> '${linked}`, 'link'],
            );
            const taken = await failure(jobs.link(there, linked));
            assert.deepEqual([taken.code, taken.step], ['EEXIST', 'link'], 'a link never replaces a name');

            const found = await jobs.lstat(there);
            const st = statSync(there);
            assert.deepEqual([found.isFile, found.size], [true, 10]);
            assert.ok(Math.abs(found.mtimeMs - st.mtimeMs) < 0.001, `mtime ${found.mtimeMs} against ${st.mtimeMs}`);
            assert.ok(found.times.openMs >= 0);
            const symlink = join(dir, 'symlink');
            symlinkSync(there, symlink);
            assert.equal((await jobs.lstat(symlink)).isFile, false, 'a link is not followed');
            assert.equal((await jobs.lstat(made)).isFile, false, 'a directory is no file');
            const nothing = await failure(jobs.lstat(join(dir, 'nothing')));
            assert.deepEqual([nothing.code, nothing.syscall, nothing.step], ['ENOENT', 'lstat', 'lstat']);

            const missing = await failure(jobs.read({ path: join(dir, 'none'), flags: fsc.O_RDONLY, into: data }));
            assert.deepEqual([missing.code, missing.step], ['ENOENT', 'open']);

            const wrongSize = await failure(jobs.read({ path: there, flags: fsc.O_RDONLY, into: data, expectSize: 11 }));
            assert.deepEqual([wrongSize.code, wrongSize.syscall, wrongSize.step], ['ENOENT', 'fstat', 'check']);
            execFileSync('mkfifo', [join(dir, 'fifo')]);
            const fifo = await failure(
              jobs.read({ path: join(dir, 'fifo'), flags: fsc.O_RDONLY | fsc.O_NONBLOCK, into: data, expectSize: 0 }),
            );
            assert.equal(fifo.step, 'check', 'a FIFO is not a block');

            writeFileSync(join(dir, 'full'), 'y');
            const target = join(dir, 'occupied');
            execFileSync('mkdir', ['-p', join(target, 'inside')]);
            const renamed = await failure(
              jobs.write({ path: join(dir, 't'), flags: NEW, mode: 0o644, data, sync: true, renameTo: target }),
            );
            assert.equal(renamed.step, 'rename');
            assert.equal(renamed.syscall, 'rename');
            assert.ok(existsSync(join(dir, 't')), 'the file stays for its caller to remove');
            assert.ok(renamed.times.syncMs > 0, 'the times of the calls before the failure are kept');
            // Every descriptor was closed: the process holds none of these files open.
            const open = readdirSync('/proc/self/fd').flatMap((fd) => {
              try {
                return [readlinkSync(`/proc/self/fd/${fd}`)];
              } catch {
                return []; // the listing's own descriptor, closed by now
              }
            });
            assert.deepEqual(
              open.filter((p) => p.startsWith(dir)),
              [],
            );
          },
          engine,
        );
      });
    },
  );

  test(
    `${engine}: many jobs on few threads (more than the ring has entries) all settle, each with its own bytes; a closed pool takes no more but finishes what it had`,
    { skip },
    async () => {
      await withTempDir(async (dir) => {
        const jobs = BlockFiles.load(2, engine);
        if (typeof jobs === 'string') throw new Error(jobs);
        const n = 300;
        const writes: Array<Promise<unknown>> = [];
        for (let i = 0; i < n; i++) {
          const job: BlockWrite = {
            path: join(dir, `f${i}`),
            flags: NEW,
            mode: 0o644,
            data: Buffer.from(`block ${i}`),
            sync: i % 10 === 0,
          };
          writes.push(jobs.write(job));
        }
        // Refused at once, before it is queued, and its id is not lost: the next jobs still settle.
        await assert.rejects(
          jobs.write({ path: join(dir, 'a\u0000b'), flags: NEW, mode: 0o644, data: new Uint8Array(1), sync: false }),
          /NUL/,
        );
        jobs.close(); // the 300 are queued: they still run and settle
        await assert.rejects(jobs.read({ path: join(dir, 'f0'), flags: fsc.O_RDONLY, into: new Uint8Array(16) }), /closed/);
        await Promise.all(writes);
        for (let i = 0; i < n; i += 37) assert.equal(readFileSync(join(dir, `f${i}`), 'utf8'), `block ${i}`);
        await withJobs(
          3,
          async (again) => {
            const reads = Array.from({ length: n }, (_, i) => {
              const job: BlockRead = { path: join(dir, `f${i}`), flags: fsc.O_RDONLY, into: new Uint8Array(32) };
              return again.read(job).then((t) => Buffer.from(job.into.subarray(0, t.bytes)).toString());
            });
            assert.deepEqual(
              await Promise.all(reads),
              Array.from({ length: n }, (_, i) => `block ${i}`),
            );
          },
          engine,
        );
      });
    },
  );

  test(
    `${engine}: a process that exits with jobs in flight exits cleanly (the threads stop before its buffers are freed)`,
    { skip },
    async () => {
      await withTempDir(async (dir) => {
        const module = pathToFileURL(join(import.meta.dirname, '../../src/tiers/block-file.js')).href;
        const script = `
      import { BlockFiles } from '${module}';
      const jobs = BlockFiles.load(4, '${engine}');
      for (let round = 0; round < 5; round++)
        for (let i = 0; i < 400; i++) {
          const out = new Uint8Array(65536).fill(i);
          void jobs.write({ path: '${dir}/x' + round + '_' + i, flags: ${NEW}, mode: 0o644, data: out, sync: true }).catch(() => {});
        }
      setTimeout(() => process.exit(3), 5);`;
        // A run's end: its last jobs settle, the pool is closed and the process exits at once, while the
        // threads are still ending (the teardown must wait until the last has let go of Node's objects).
        const closing = `
      import { BlockFiles } from '${module}';
      const jobs = BlockFiles.load(16, '${engine}');
      const writes = Array.from({ length: 64 }, (_, i) =>
        jobs.write({ path: '${dir}/y' + i, flags: ${fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC}, mode: 0o644, data: new Uint8Array(4096), sync: false }));
      await Promise.all(writes);
      jobs.close();
      process.exit(4);`;
        for (let run = 0; run < 3; run++) {
          const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
          assert.equal(child.status, 3, `exit status ${child.status} (signal ${child.signal}): ${child.stderr}`);
          assert.equal(child.stderr, '');
        }
        for (let run = 0; run < 10; run++) {
          const child = spawnSync(process.execPath, ['--input-type=module', '-e', closing], { encoding: 'utf8' });
          assert.equal(child.status, 4, `run ${run}: exit status ${child.status} (signal ${child.signal}): ${child.stderr}`);
        }
      });
    },
  );
}

/** One-chunk source of `bytes`. */
function sourceOf(bytes: Uint8Array): ChunkSource {
  return {
    size: bytes.length,
    async *chunks() {
      yield bytes;
    },
  };
}

test(
  'the file tier runs one-chunk entries as jobs and larger ones through fs; creates and renames counted; a foreign file refused',
  { skip: SKIP },
  async () => {
    await withTempDir(async (dir) => {
      const real = BlockFiles.load(2);
      if (typeof real === 'string') throw new Error(real);
      const used = { write: 0, read: 0, unlink: 0 };
      // The backend sees a BlockFiles; this one counts what it is asked.
      const counting = {
        write: (j: BlockWrite) => (used.write++, real.write(j)),
        read: (j: BlockRead) => (used.read++, real.read(j)),
        unlink: (p: string) => (used.unlink++, real.unlink(p)),
        close: () => real.close(),
      } as unknown as BlockFiles;
      const ops = new Map<string, number>();
      const sink = (op: MetadataOp, ms: number, ok: boolean): void => {
        assert.ok(ms >= 0);
        ops.set(`${op}${ok ? '' : ' failed'}`, (ops.get(`${op}${ok ? '' : ' failed'}`) ?? 0) + 1);
      };
      const flat = await FileBackend.create({
        dir: join(dir, 'flat'),
        chunkBytes: 65536,
        runId: '0000beef',
        blockFiles: counting,
        metadataOps: sink,
      });
      assert.equal(flat.effectiveIoMode, 'direct', 'this test needs O_DIRECT under the temp dir');
      for (let i = 0; i < 10; i++) {
        const timing = await flat.write(`k${i}`, sourceOf(Buffer.alloc(5000 + i, i)));
        assert.ok(timing.deviceMs > 0 && timing.hostMs >= 0 && Math.abs(timing.totalMs - timing.hostMs - timing.deviceMs) < 1e-9);
      }
      await flat.write('k0', sourceOf(Buffer.alloc(100, 9))); // a rewrite of our own: no create
      await flat.write('big', sourceOf(Buffer.alloc(65537, 1))); // two chunks: fs calls
      assert.deepEqual(used, { write: 11, read: 0, unlink: 0 });
      assert.deepEqual(Object.fromEntries(ops), { create: 11 });
      const parts: Buffer[] = [];
      const r = await flat.read('k3', (c) => void parts.push(Buffer.from(c)));
      assert.equal(r.bytes, 5003);
      assert.deepEqual(Buffer.concat(parts), Buffer.alloc(5003, 3));
      assert.equal((await flat.read('k0')).bytes, 100);
      assert.equal(used.read, 2);
      writeFileSync(flat.pathFor('theirs'), 'keep');
      await assert.rejects(flat.write('theirs', sourceOf(Buffer.alloc(10))), ForeignFileError);
      assert.equal(readFileSync(flat.pathFor('theirs'), 'utf8'), 'keep');
      assert.equal(ops.get('create failed'), 1);
      await flat.close();
      assert.deepEqual(readdirSync(join(dir, 'flat')), [flat.pathFor('theirs').split('/').pop()]);
      assert.equal(used.unlink, 11, 'each entry of ours unlinked as a job (the two-chunk one too), never theirs');
      assert.equal(ops.get('unlink'), 11);

      const again = BlockFiles.load(2);
      if (typeof again === 'string') throw new Error(again);
      ops.clear();
      const fan = await FileBackend.create({
        dir: join(dir, 'fan'),
        runId: '0000cafe',
        fanout: { namespace: fanoutNamespace('0000cafe') },
        blockFiles: again,
        metadataOps: sink,
      });
      let dirsMade = 0;
      const mkdirJob = again.mkdir.bind(again);
      again.mkdir = (p: string, mode: number) => (dirsMade++, mkdirJob(p, mode));
      for (let i = 0; i < 8; i++) await fan.write(`b${i}`, sourceOf(Buffer.alloc(4096 * (i + 1), i)));
      assert.equal(ops.get('create'), 8);
      assert.equal(ops.get('rename'), 8);
      // Each fan-out directory made once, as a job: both levels of each block's name (names apart are apart).
      const levels = new Set(Array.from({ length: 8 }, (_, i) => fan.pathFor(`b${i}`)).flatMap((p) => [dirname(p), dirname(dirname(p))]));
      assert.equal(ops.get('mkdir'), levels.size);
      assert.equal(dirsMade, levels.size);
      for (let i = 0; i < 8; i++) assert.equal(statSync(fan.pathFor(`b${i}`)).size, 4096 * (i + 1));
      assert.equal((await fan.read('b5')).bytes, 6 * 4096);
      await fan.close();
      assert.equal(existsSync(join(dir, 'fan', fanoutNamespace('0000cafe'))), false);
    });
  },
);

test(
  '--file-calls: native takes io_uring where the kernel allows it, else the threads (saying why); io_uring or threads only that way or a setup error',
  { skip: SKIP },
  () => {
    const uring = ENGINES[0]?.skip === false;
    const auto = blockFilesFor({ ioMode: 'direct' });
    assert.ok(auto instanceof BlockFiles);
    try {
      assert.equal(auto.engine, uring ? 'io_uring' : 'threads');
      assert.match(fileCallsOf('direct', auto), uring ? /through io_uring by one thread/ : /on the helper's threads .*not io_uring: /);
    } finally {
      auto.close();
    }
    const threads = blockFilesFor({ ioMode: 'direct', fileCalls: 'threads' });
    assert.ok(threads instanceof BlockFiles);
    threads.close();
    assert.equal(threads.engine, 'threads');
    assert.equal(threads.notUring, undefined, 'asked for threads: nothing was refused');
    assert.match(fileCallsOf('direct', threads), /on the helper's threads \(each timed on the thread that makes it\)$/);
    if (uring) {
      const only = blockFilesFor({ ioMode: 'direct', fileCalls: 'io_uring' });
      assert.ok(only instanceof BlockFiles && only.engine === 'io_uring');
      only.close();
    } else assert.throws(() => blockFilesFor({ ioMode: 'direct', fileCalls: 'io_uring' }), StorageSetupError);
    assert.equal(blockFilesFor({ ioMode: 'buffered', fileCalls: 'io_uring' }), undefined, 'buffered I/O: fs, as for native');
    // --enable-latency-tracing times system calls: native takes the threads and says why; io_uring alone is refused.
    const traced = blockFilesFor({ ioMode: 'direct', tracesSystemCalls: true });
    assert.ok(traced instanceof BlockFiles);
    traced.close();
    assert.equal(traced.engine, 'threads');
    assert.match(fileCallsOf('direct', traced), /not io_uring: --enable-latency-tracing times read, write and fsync system calls/);
    assert.throws(
      () => blockFilesFor({ ioMode: 'direct', fileCalls: 'io_uring', tracesSystemCalls: true }),
      (e: unknown) =>
        e instanceof StorageSetupError && /--file-calls io_uring cannot be used here: .*use native or threads$/.test(e.message),
    );
  },
);

test('a kernel that refuses io_uring: native runs on the threads and says why; io_uring alone is refused with the reason', () => {
  const opened: number[] = [];
  const refusing: BlockIoHelper = {
    open: (_threads, _onDone, engine) => {
      opened.push(engine);
      if (engine === 1) throw new Error('io_uring_setup: Operation not permitted (kernel.io_uring_disabled, or a seccomp filter)');
      return {};
    },
    submit: () => undefined,
    close: () => undefined,
  };
  const auto = BlockFiles.on(refusing, 4, 'auto');
  assert.ok(auto instanceof BlockFiles);
  assert.equal(auto.engine, 'threads');
  assert.deepEqual(opened, [1, 0]);
  assert.match(
    fileCallsOf('direct', auto),
    /on the helper's threads \(each timed .*; not io_uring: io_uring_setup: Operation not permitted .*seccomp/,
  );
  assert.equal(
    BlockFiles.on(refusing, 4, 'io_uring'),
    'io_uring_setup: Operation not permitted (kernel.io_uring_disabled, or a seccomp filter)',
  );
});

test(
  'the helper refuses a job whose steps do not go together: a path-only call with another step or a descriptor, an unknown step, too short an out',
  { skip: SKIP },
  () => {
    const helper = loadNativeHelper('block_io', 'native block-file') as BlockIoHelper;
    const pool = helper.open(1, () => undefined, 0);
    try {
      const submit = (steps: number, fd = -1, outLength = 10): void => {
        const out = new Float64Array(outLength);
        out.set([0, 0, 0o755, steps, 0, 0, 0, fd]);
        helper.submit(pool, '/nonexistent/kv-cache-test', new Uint8Array(0), '/nonexistent/other', out);
      };
      const UNLINK = 512;
      const MKDIR = 1024;
      const LINK = 2048;
      const LSTAT = 4096;
      for (const steps of [MKDIR | UNLINK, LINK | 1, LSTAT | 16, LINK | LSTAT, 8192])
        assert.throws(() => submit(steps), RangeError, `steps ${steps}`);
      assert.throws(() => submit(LSTAT, 3), RangeError, 'an lstat takes a path, not a descriptor');
      assert.throws(() => submit(MKDIR, -1, 8), /out must hold 10 numbers/);
    } finally {
      helper.close(pool);
    }
  },
);
