// `kv-cache replay` given bad or odd input, as a hostile user would: every refusal is one message and
// exit 2 with nothing created; odd but valid input (long keys, long pauses) works within its limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inTempDir, runCli } from './run-cli.js';
import { readValidReplayResults } from '../report/validate-results.js';

const HEADER = 'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase';
const trace = (rows: readonly string[]): string => `${[HEADER, ...rows].join('\n')}\n`;

function assertBadInput(r: { code: number | null; stderr: string }, message: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(r.stderr.trim().split('\n')[0]?.startsWith('kv-cache replay: error:'), true, r.stderr);
}

test('replay: bad flag values are refused together, then bad paths together, before anything is created', async () => {
  await inTempDir(async (dir) => {
    const t = join(dir, 't.csv');
    await writeFile(t, trace(['1.0,Write,4096,Tier-2,a,Prefill']));
    const r = await runCli(['replay', t, '--concurrency', '1e9', '--seed', '1e300', '--duration', '0', '--cache-dir', '', '--output', t]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      [
        'kv-cache replay: error: Invalid configuration (3 problems):',
        "  - --concurrency expects an integer from 1 to 1024, got '1e9'",
        "  - --duration expects an integer from 1 to 2073600, got '0'",
        "  - --seed expects an integer from 0 to 9007199254740991, got '1e300'",
        'Usage: kv-cache replay TRACE [options]',
        '',
      ].join('\n'),
    );
    const paths = await runCli(['replay', t, '--cache-dir', '', '-o', t]);
    assert.equal(
      paths.stderr,
      [
        'kv-cache replay: error: Invalid configuration (2 problems):',
        "  - cache-dir '' is empty: give a directory path (or leave the flag out for a temporary directory)",
        `  - --output ${t} is the same file as the trace ${t}; writing it would overwrite the input`,
        'Usage: kv-cache replay TRACE [options]',
        '',
      ].join('\n'),
    );
    const missing = join(dir, 'new-cache');
    assertBadInput(await runCli(['replay', t, '--cache-dir', missing, '--output', join(dir, 'o.json')]), /does not exist; create it first/);
    assertBadInput(await runCli(['replay', t, '--cache-dir', '/proc/kv', '--output', join(dir, 'o.json')]), /cannot be a system directory/);
    assertBadInput(await runCli(['replay', t, '--cache-dir', t, '--output', join(dir, 'o.json')]), /exists and is not a directory/);
    assertBadInput(await runCli(['replay', t, '--output', '/dev/null']), /is a device node/);
    assertBadInput(await runCli(['replay', t, '--output', join(dir, 'sub') + '/']), /ends in '\/'/);
    assert.deepEqual(readdirSync(dir), ['t.csv']);
  });
});

test('replay: a directory, a FIFO or a device as the trace is refused without opening it', async () => {
  await inTempDir(async (dir) => {
    const out = join(dir, 'o.json');
    assertBadInput(await runCli(['replay', dir, '--output', out]), /is a directory; give a trace file/);
    assertBadInput(await runCli(['replay', '/dev/zero', '--output', out]), /is not a regular file/);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    assertBadInput(await runCli(['replay', fifo, '--output', out]), /is not a regular file/); // would block forever if opened
    assert.equal(existsSync(out), false);
  });
});

test('replay: a .zst that is truncated, not zstd or garbage is one message naming the file; the cache dir is not created', async () => {
  await inTempDir(async (dir) => {
    const plain = join(dir, 't.csv');
    const rows = Array.from({ length: 400 }, (_, i) => `${(1 + i / 1000).toFixed(6)},Write,4096,Tier-2,key_${i},Prefill`);
    await writeFile(plain, trace(rows));
    execFileSync('zstd', ['-q', '-f', plain, '-o', join(dir, 'whole.csv.zst')]);
    const whole = await readFile(join(dir, 'whole.csv.zst'));
    await writeFile(join(dir, 'cut.csv.zst'), whole.subarray(0, whole.length - 20));
    await writeFile(join(dir, 'plain.csv.zst'), await readFile(plain));
    await writeFile(join(dir, 'magic.csv'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6]));
    for (const name of ['cut.csv.zst', 'plain.csv.zst', 'magic.csv']) {
      const cache = join(dir, `cache-${name}`);
      const r = await runCli(['replay', join(dir, name), '--cache-dir', cache, '--create-cache-dir', '--output', join(dir, 'o.json')]);
      assertBadInput(r, new RegExp(`zstd .*${name.replace('.', '\\.')}`));
      assert.equal(existsSync(join(dir, 'o.json')), false, name);
      if (name !== 'cut.csv.zst') assert.equal(existsSync(cache), false, `${name}: nothing created before the trace is known good`);
      // zstd may decode rows before it meets the cut: those replayed leave no entry file.
      else assert.deepEqual(existsSync(cache) ? readdirSync(cache) : [], [], 'no entry file left');
    }
  });
});

test('replay: a size no entry can have is a bad row; a 300-character key is stored under a hashed name', async () => {
  await inTempDir(async (dir) => {
    const huge = join(dir, 'huge.csv');
    await writeFile(huge, trace(['1.0,Write,4096,Tier-2,a,Prefill', `1.1,Write,${2 ** 41},Tier-2,b,Prefill`]));
    assertBadInput(
      await runCli(['replay', huge, '--output', join(dir, 'h.json')]),
      /huge\.csv: data row 2: Object_Size_Bytes 2199023255552 is larger than the 1 TiB \(2\^40 bytes\) an entry may have/,
    );
    assert.equal(existsSync(join(dir, 'h.json')), false);

    const key = 'k'.repeat(300);
    const long = join(dir, 'long.csv');
    await writeFile(
      long,
      trace([`1.0,Write,8192,Tier-2,${key},Prefill`, `1.1,Read,8192,Tier-2,${key},Decode`, `1.2,Delete,8192,Tier-2,${key},Evict`]),
    );
    const cache = join(dir, 'c');
    await mkdir(cache);
    const out = join(dir, 'l.json');
    const r = await runCli(['replay', long, '--cache-dir', cache, '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    const doc = await readValidReplayResults(out);
    assert.deepEqual([doc.replay.writes, doc.replay.reads, doc.replay.deletes, doc.replay.read_bytes], [1, 1, 1, 8192]);
    assert.equal(doc.kvcache_bench.hashed_keys, 1);
    assert.equal(doc.kvcache_bench.stop_reason, 'workload_complete');
    assert.deepEqual(readdirSync(cache), []);
  });
});

test('replay: --duration stops a paced trace with an 11-day gap', async () => {
  await inTempDir(async (dir) => {
    const gap = join(dir, 'gap.csv');
    await writeFile(gap, trace(['1.0,Write,4096,Tier-2,a,Prefill', `${1 + 11 * 86_400}.0,Write,4096,Tier-2,b,Prefill`]));
    const out = join(dir, 'g.json');
    const r = await runCli(['replay', gap, '--paced', '--duration', '1', '--output', out]);
    assert.equal(r.code, 0, r.stderr);
    const doc = await readValidReplayResults(out);
    assert.equal(doc.kvcache_bench.stop_reason, 'duration');
    assert.equal(doc.kvcache_bench.duration_limit_sec, 1);
    assert.equal(doc.kvcache_bench.interrupted, false);
    assert.equal(doc.replay.writes, 1);
    assert.match(r.stdout, /Stopped before the end of the trace: duration/);
    // Said before the wait, not discovered after it.
    assert.equal(
      r.stderr,
      'kv-cache replay: paced replay: the trace spans 11.0 days from its first row to its last; --duration stops it after 1.0 s\n',
    );
  });
});
