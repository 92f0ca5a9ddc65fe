// End-to-end against radosgw (issue 35): what the S3 tier's first change left out. A replay onto the
// bucket reports the object_store block a run reports; a force-quit run (a second, different signal)
// leaves its objects behind, the next run reports them and keeps them, and --remove-stale-entries
// removes them.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { readValidReplayResults, readValidResults } from '../report/validate-results.js';
import { ENDPOINT, freshBucket, NO_RADOSGW, objectCount, runWith, s3Args } from './s3-env.js';
import { inTempDir, pacedTrace, smallWorkloadArgs } from './run-cli.js';

if (NO_RADOSGW !== false) process.stdout.write(`# s3 e2e tests skipped: ${NO_RADOSGW}\n`);

describe('the S3 tier: replay figures and leftovers of a force-quit run', { skip: NO_RADOSGW }, () => {
  const host = ENDPOINT === undefined ? '' : new URL(ENDPOINT).host;

  test('kv-cache replay onto S3 reports kvcache_bench.object_store and prints its lines', async () => {
    await inTempDir(async (dir) => {
      const trace = join(dir, 'trace.csv');
      await writeFile(trace, pacedTrace());
      const out = join(dir, 'replay.json');
      const bucket = freshBucket('gaps');
      const r = await runWith(['replay', trace, '--concurrency', '4', '-o', out, ...s3Args(bucket).slice(0, -2), '--create-bucket']);
      assert.equal(r.code, 0, r.stderr);
      const doc = await readValidReplayResults(out);
      const o = doc.kvcache_bench.object_store;
      assert.ok(o !== undefined, 'kvcache_bench.object_store in the replay results');
      assert.deepEqual([o.endpoint_host, o.bucket], [host, bucket]);
      assert.equal(o.puts, doc.replay.writes);
      assert.equal(o.gets, doc.replay.reads);
      assert.ok(o.deletes >= doc.replay.deletes, `deletes ${o.deletes}, replayed ${doc.replay.deletes}`);
      assert.deepEqual(o.failures, {});
      assert.match(
        r.stdout,
        new RegExp(
          `Object store ${host.replaceAll('.', '\\.')} bucket ${bucket}: requests \\d+, retries 0, puts ${o.puts}, gets ${o.gets}`,
        ),
      );
      assert.equal(await objectCount(bucket), 0);
    });
  });

  test('a force-quit run leaves its objects; the next run reports and keeps them; --remove-stale-entries removes them', async () => {
    await inTempDir(async (dir) => {
      const bucket = freshBucket('stale');
      const run = async (out: string, extra: readonly string[], onStdout?: Parameters<typeof runWith>[2]) =>
        runWith(
          [
            ...(await smallWorkloadArgs(dir)),
            ...['--num-users', '4', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--output', join(dir, out)],
            ...s3Args(bucket),
            '--create-bucket',
            ...extra,
          ],
          {},
          onStdout,
        );
      // A long run, force-quit once it has written objects: SIGINT, then at once SIGTERM (a different signal exits at once).
      let signalled = false;
      let objects = 0;
      const quit = await run('killed.json', ['--duration', '120'], (soFar, child) => {
        if (signalled || !soFar.includes('Storage under test')) return;
        signalled = true;
        void (async () => {
          for (let i = 0; i < 200 && objects === 0; i++) {
            objects = await objectCount(bucket).catch(() => 0);
            if (objects === 0) await new Promise((r) => setTimeout(r, 100));
          }
          child.kill('SIGINT');
          child.kill('SIGTERM');
        })();
      });
      assert.ok(signalled && objects > 0, `the run wrote objects before it was stopped (${objects})`);
      assert.ok(quit.code === 143 || quit.code === 130, `force-quit exit ${quit.code} ${quit.signal}\n${quit.stderr}`);
      const left = await objectCount(bucket);
      assert.ok(left > 0, 'the force-quit run left objects in the bucket');

      const kept = await run('kept.json', ['--duration', '2']);
      assert.equal(kept.code, 0, kept.stderr);
      const keptDoc = await readValidResults(join(dir, 'kept.json'));
      assert.deepEqual([keptDoc.kvcache_bench.stale_entries?.count, keptDoc.kvcache_bench.stale_entries?.removed], [left, 0]);
      assert.ok(
        keptDoc.kvcache_bench.warnings.some(
          (w) => w.includes(`held ${left} entry object(s) of earlier runs`) && w.includes('left in place'),
        ),
      );
      assert.equal(await objectCount(bucket), left, 'the leftovers are kept; the run removed only its own objects');

      const removed = await run('removed.json', ['--duration', '2', '--remove-stale-entries']);
      assert.equal(removed.code, 0, removed.stderr);
      const removedDoc = await readValidResults(join(dir, 'removed.json'));
      assert.deepEqual([removedDoc.kvcache_bench.stale_entries?.count, removedDoc.kvcache_bench.stale_entries?.removed], [left, left]);
      assert.ok(removedDoc.kvcache_bench.warnings.some((w) => w.includes(`${left} removed (--remove-stale-entries)`)));
      assert.equal(await objectCount(bucket), 0, 'nothing left in the bucket');
    });
  });
});
