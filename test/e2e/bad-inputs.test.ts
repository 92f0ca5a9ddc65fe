// A corpus of bad inputs (issue 12): flags, config files, ShareGPT datasets, BurstGPT traces and I/O
// traces, each written into a fresh temp dir by this file. For every case the CLI (main(), in this
// process) must exit 2 with one error message naming the problem, print no stack trace, and leave
// nothing behind: neither the results file nor the cache dir exists afterwards, and the temp dir
// holds only the inputs. A sample runs the real command in a child process with a timeout, so a hang
// (e.g. a FIFO opened for reading) fails the test instead of blocking it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { BIN, inTempDir } from './run-cli.js';

const HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';
const TRACE_HEADER = 'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase';

interface BadInput {
  readonly name: string;
  /** The input files, written into the case's directory (a null content makes a FIFO). */
  readonly files?: Readonly<Record<string, string | Buffer | null>>;
  /** Arguments; `@` is replaced by the case's directory. */
  readonly args: readonly string[];
  /** The error message must match. */
  readonly expect: RegExp;
}

const yaml = (name: string, args: readonly string[], text: string | Buffer | null, expect: RegExp): BadInput => ({
  name: `config: ${name}`,
  files: { 'c.yaml': text },
  args: ['--config', '@/c.yaml', ...args],
  expect,
});
const sharegpt = (name: string, text: string | Buffer | null, expect: RegExp): BadInput => ({
  name: `sharegpt: ${name}`,
  files: { 'd.json': text },
  args: ['--dataset-path', '@/d.json'],
  expect,
});
const burst = (name: string, files: Readonly<Record<string, string | Buffer | null>>, path: string, expect: RegExp): BadInput => ({
  name: `burstgpt: ${name}`,
  files,
  args: ['--use-burst-trace', '--burst-trace-path', path],
  expect,
});
const trace = (name: string, file: string, text: string | Buffer | null, expect: RegExp): BadInput => ({
  name: `replay: ${name}`,
  files: { [file]: text },
  args: ['replay', `@/${file}`],
  expect,
});
const flags = (name: string, args: readonly string[], expect: RegExp): BadInput => ({ name: `flags: ${name}`, args, expect });

const aliasBomb = [
  'a: &a [x,x,x,x,x,x,x,x,x]',
  ...'bcdefg'.split('').map(
    (k, i) =>
      `${k}: &${k} [${Array(9)
        .fill(`*${'abcdefg'[i] ?? 'a'}`)
        .join(',')}]`,
  ),
].join('\n');
const manyKeys = Array.from({ length: 30_000 }, (_, i) => `k${i}: 1`).join('\n');
const model = (fields: string): string => `model_configs:\n  m:\n${fields}`;
const zstdOf = (text: string): Buffer => execFileSync('zstd', ['-3', '-q', '-c'], { input: text });
const goodTrace = `${TRACE_HEADER}\n${'1732233600.5,Write,4096,Tier-2,k,Prefill\n'.repeat(500)}`;

const CASES: readonly BadInput[] = [
  // ---- flags
  flags('unknown flag', ['--num-userz', '3'], /unknown flag '--num-userz' \(did you mean --num-users\?\)/),
  flags('single dash', ['-num-users', '3'], /unknown flag/),
  // ---- KV layouts (issue 34)
  flags(
    'kv layout fanout on s3',
    ['--kv-layout', 'fanout', '--storage-backend', 's3'],
    /--kv-layout fanout lays entries out in files: it needs --storage-backend file/,
  ),
  flags('kv layout unknown', ['--kv-layout', 'pile'], /--kv-layout/),
  flags(
    'slab slot smaller than a block',
    ['--kv-layout', 'slab', '--kv-block-tokens', '256', '--slab-slot-mib', '1'],
    /--slab-slot-mib 1 is smaller than a KV block \(256 tokens\), 6 MiB for model 'tiny-1b'/,
  ),
  flags(
    'slab file smaller than a slot',
    ['--kv-layout', 'slab', '--kv-block-tokens', '256', '--slab-file-gib', '0.001'],
    /--slab-file-gib 0\.001 is smaller than one slot \(6 MiB\)/,
  ),
  flags(
    'slab on the memory backend',
    ['--kv-layout', 'slab', '--storage-backend', 'memory'],
    /--kv-layout slab .* needs --storage-backend file/,
  ),
  flags('slab slot negative', ['--kv-layout', 'slab', '--slab-slot-mib', '-1'], /slab-slot-mib must be non-negative|slab-slot-mib/),
  flags('stray argument', ['bogus'], /unexpected argument 'bogus'/),
  flags('missing value', ['--num-users'], /--num-users expects an integer, but no value was given/),
  flags('flag as value', ['--duration', '--seed'], /--duration expects an integer, got the flag '--seed'/),
  flags('not an integer', ['--num-users', 'abc'], /--num-users expects an integer, got 'abc'/),
  flags('fraction for an integer', ['--num-users', '1.5'], /--num-users expects an integer/),
  flags('integer overflow', ['--num-users', '99999999999999999999'], /--num-users expects an integer/),
  flags('zero users', ['--num-users', '0'], /num-users must be positive/),
  flags('negative users', ['--num-users', '-4'], /num-users must be positive/),
  flags('users over the limit', ['--num-users', '100001'], /num-users exceeds limit of/),
  flags('zero duration', ['--duration', '0'], /duration must be positive/),
  flags('duration over 24 h', ['--duration', '90000'], /duration exceeds 24 hours/),
  flags('negative gpu memory', ['--gpu-mem-gb', '-1'], /gpu-mem-gb cannot be negative/),
  flags('not a number', ['--cpu-mem-gb', 'lots'], /--cpu-mem-gb expects a number, got 'lots'/),
  flags('infinite number', ['--cpu-mem-gb', '1e400'], /--cpu-mem-gb expects a number/),
  flags('NaN', ['--request-rate', 'NaN'], /--request-rate expects a number/),
  flags('hex number', ['--seed', '0x10'], /--seed expects an integer/),
  flags('unknown model', ['--model', 'gpt-17'], /unknown model 'gpt-17'; valid models: /),
  flags('bad choice', ['--generation-mode', 'turbo'], /--generation-mode: invalid choice 'turbo'; valid choices: /),
  flags('bad io mode', ['--io-mode', 'DIRECT'], /invalid choice 'DIRECT'.*did you mean 'direct'/),
  flags('bad tokenizer', ['--tokenizer', 'gpt2'], /--tokenizer: invalid choice 'gpt2'/),
  flags('switch with a value', ['--precondition=yes'], /--precondition is a switch and takes no value/),
  flags('empty output', ['--output', ''], /--output expects a non-empty value/),
  flags('prefill and decode only', ['--prefill-only', '--decode-only'], /--prefill-only and --decode-only are mutually exclusive/),
  flags(
    'dataset and BurstGPT',
    ['--dataset-path', 'd.json', '--use-burst-trace'],
    /--dataset-path \(ShareGPT replay\) and --use-burst-trace \(BurstGPT replay\) are mutually exclusive/,
  ),
  flags('tensor parallel over gpus', ['--tensor-parallel', '4', '--num-gpus', '2'], /tensor-parallel \(4\) cannot exceed num-gpus \(2\)/),
  flags('negative trace speedup', ['--trace-speedup', '-1'], /trace-speedup/),
  flags('negative max requests', ['--max-requests', '-1'], /max-requests/),
  flags('cache dir in /etc', ['--cache-dir', '/etc/kv'], /cache-dir/),
  flags('cache dir in /dev', ['--cache-dir', '/dev/kv'], /cache-dir/),
  flags('missing cache dir', ['--cache-dir', '@/none/deeper'], /does not exist/),
  flags(
    'output under /proc',
    ['--output', '/proc/x/r.json'],
    /--output \/proc\/x\/r\.json: cannot write there \(\/proc is a pseudo file system\)/,
  ),
  flags('spreadsheet under /sys', ['--xlsx-output', '/sys/r.xlsx'], /--xlsx-output \/sys\/r\.xlsx: cannot write there/),
  flags('output is a directory', ['--output', '@'], /is a directory/),
  flags('100 KB value', ['--num-users', `${'7'.repeat(100_000)}x`], /got '7{80}… \(100001 characters\)'/),
  flags(
    'many unknown flags',
    Array.from({ length: 200 }, (_, i) => `--bogus-${i}`),
    /200 problems[\s\S]*… and 175 more \(not listed\)/,
  ),
  flags(
    'smallest entry fits no tier',
    ['--storage-capacity-gb', '0.000001', '--cpu-mem-gb', '0'],
    /one entry of the smallest request .* fits in no tier/,
  ),
  // ---- config files
  yaml('alias bomb', [], aliasBomb, /aliases \(\*name\) expand to too much data/),
  yaml('30,000 keys', [], manyKeys, /has 30000 keys and list items; at most 10000 are accepted/),
  yaml('2 MiB file', [], `# ${'x'.repeat(2 * 1024 * 1024)}\n`, /cannot be read: is 2\.0 MiB \(\d+ bytes\); at most 1 MiB/),
  yaml(
    '500 KB value',
    [],
    `rag: "${'v'.repeat(500_000)}"`,
    /'rag' has the wrong type: expected a mapping.*got string 'v{80}… \(500000 characters\)'/,
  ),
  yaml('FIFO', [], null, /is a FIFO \(named pipe\), not a regular file/),
  // Issue 35: procfs gives this file's size as 0; it is read to its end, so its keys are refused, not ignored.
  flags('config: a procfs file (size 0 in stat, data inside)', ['--config', '/proc/self/status'], /Unknown configuration key 'Name'/),
  yaml('duplicate keys', [], 'rag:\n  top_k_chunks: 1\nrag:\n  top_k_chunks: 2\n', /Map keys must be unique: 'rag' at line 3/),
  yaml('syntax error', [], 'rag:\n  top_k_chunks: [1\n', /invalid YAML: .*line \d+/),
  yaml('tab indentation', [], 'rag:\n\ttop_k_chunks: 1\n', /invalid YAML/),
  yaml('unknown key', [], 'raggg: {}\n', /Unknown configuration key 'raggg'/),
  yaml('unknown nested key', [], 'rag:\n  top_k: 3\n', /Unknown configuration key 'rag\.top_k'/),
  yaml('wrong type', [], 'rag:\n  top_k_chunks: many\n', /'rag\.top_k_chunks' has the wrong type: expected an integer, got string 'many'/),
  yaml('negative count', [], 'rag:\n  top_k_chunks: -1\n', /'rag\.top_k_chunks' must be >= 1/),
  yaml('reversed range', [], 'user_templates:\n  chatbot:\n    context_range: [500, 10]\n', /must be ordered \[low, high\]/),
  yaml('range of 3', [], 'user_templates:\n  chatbot:\n    context_range: [1, 2, 3]\n', /exactly 2 values/),
  yaml('null section', [], 'qos_profiles: null\n', /'qos_profiles' has the wrong type/),
  yaml('top-level list', [], '- a\n- b\n', /'\(top level\)' has the wrong type: expected a mapping/),
  yaml('top-level scalar', [], 'hello\n', /has the wrong type: expected a mapping/),
  yaml('two documents', [], 'rag: {}\n---\nrag: {}\n', /invalid YAML/),
  yaml('unresolved alias', [], 'a: *nothing\n', /invalid YAML/),
  yaml('deep nesting', [], `${'['.repeat(5000)}${']'.repeat(5000)}`, /invalid YAML|wrong type/),
  yaml('binary junk', [], Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x9c, 0x3a, 0x7b]), /invalid YAML|wrong type/),
  yaml(
    'model of 8×10^21 bytes per token',
    ['--model', 'm'],
    model('    num_layers: 1000000000\n    hidden_dim: 2000000000\n    num_heads: 1\n    kv_heads: 1000\n    dtype: float16\n'),
    /'model_configs\.m' has \d.* KV bytes per token .*at most 4294967296 \(4 GiB\)/,
  ),
  yaml(
    'new model missing fields',
    ['--model', 'm'],
    model('    num_layers: 4\n'),
    /'model_configs\.m\.hidden_dim' is required for a new model/,
  ),
  yaml(
    'MLA without widths',
    [],
    model('    num_layers: 4\n    hidden_dim: 64\n    num_heads: 4\n    kv_heads: 4\n    attention_type: mla\n'),
    /needs kv_lora_rank > 0/,
  ),
  yaml(
    'model of 0 bytes per token',
    [],
    model('    num_layers: 4\n    hidden_dim: 2\n    num_heads: 4\n    kv_heads: 4\n'),
    /has 0 KV bytes per token/,
  ),
  yaml(
    'bad dtype',
    [],
    model('    num_layers: 4\n    hidden_dim: 64\n    num_heads: 4\n    kv_heads: 4\n    dtype: float8\n'),
    /'model_configs\.m\.dtype' must be one of/,
  ),
  yaml(
    'entry beyond 2^53 bytes',
    [],
    'user_templates:\n  chatbot:\n    context_range: [1, 9007199254740991]\n',
    /an entry of the largest context .* is beyond 2\^53 bytes/,
  ),
  { name: 'config: missing file', args: ['--config', '@/none.yaml'], expect: /config file '.*none\.yaml' cannot be read: file not found/ },
  { name: 'config: a directory', args: ['--config', '@'], expect: /cannot be read: is a directory, not a regular file/ },
  { name: 'config: /dev/zero', args: ['--config', '/dev/zero'], expect: /cannot be read: is a character device, not a regular file/ },
  // ---- ShareGPT datasets
  { name: 'sharegpt: missing', args: ['--dataset-path', '@/none.json'], expect: /ShareGPT dataset '.*none\.json': file not found/ },
  { name: 'sharegpt: a directory', args: ['--dataset-path', '@'], expect: /is a directory, not a regular file/ },
  { name: 'sharegpt: /dev/zero', args: ['--dataset-path', '/dev/zero'], expect: /is a character device, not a regular file/ },
  sharegpt('FIFO', null, /is a FIFO \(named pipe\), not a regular file/),
  sharegpt('empty file', '', /the file is empty/),
  sharegpt('empty array', '[]', /no usable conversation: the array has no records/),
  sharegpt('object at top level', '{"conversations": []}', /the top level is an object, not an array/),
  sharegpt('JSON Lines', '{"id": 1}\n{"id": 2}\n', /JSON Lines, one record per line, is not supported/),
  sharegpt('number at top level', '42', /the top level is a number/),
  sharegpt('truncated', '[{"id": "a", "conversations": [{"from": "human"', /unexpected end of file inside record 1.*truncated/),
  sharegpt('not closed', '[{"id": "a"}', /the array is not closed/),
  sharegpt('trailing comma', '[{"id": "a"},]', /trailing comma/),
  sharegpt('syntax error in a record', '[{"id": "a", "x": tru}]', /invalid JSON at line 1, column \d+: .*in record 1/),
  sharegpt(
    'no pairs',
    '[{"id": "a", "conversations": [{"from": "gpt", "value": "x"}, {"from": "human", "value": "y"}]}]',
    /no usable conversation: none of its 1 records/,
  ),
  sharegpt('only system messages', '[{"messages": [{"role": "system", "content": "be nice"}]}]', /no usable conversation/),
  sharegpt('scalars', '[1, "two", null, true]', /no usable conversation: none of its 4 records/),
  sharegpt('binary junk', Buffer.from([0x00, 0xff, 0x13, 0x37]), /unexpected byte 0x00/),
  sharegpt('BOM only', Buffer.from([0xef, 0xbb, 0xbf]), /the file is empty/),
  sharegpt(
    'invalid UTF-8 in a string',
    Buffer.concat([Buffer.from('[{"conversations": [{"from": "human", "value": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}]')]),
    /no usable conversation/,
  ),
  sharegpt('text after the array', '[{"id": "a"}] x', /unexpected text after the closing '\]'/),
  sharegpt('unescaped control character', '[{"conversations": [{"from": "human", "value": "a\tb"}]}]', /unescaped control character/),
  // ---- BurstGPT traces
  burst('missing file', {}, '@/none.csv', /BurstGPT trace not found: ".*none\.csv"/),
  burst('FIFO', { 'f.csv': null }, '@/f.csv', /is not a regular file or directory/),
  burst('directory without csv', { 'x.txt': 'hello' }, '@', /holds no \*\.csv files/),
  burst('directory whose csv is a FIFO', { 'f.csv': null }, '@', /holds no \*\.csv files/),
  burst('glob matching nothing', { 'a.csv': `${HEADER}\n` }, '@/b*.csv', /matches no files/),
  burst('glob in a directory name', {}, '@/*/x.csv', /wildcards are supported in the file name only/),
  burst('empty file', { 't.csv': '' }, '@/t.csv', /is empty \(no header line\)/),
  burst('header only', { 't.csv': `${HEADER}\n` }, '@/t.csv', /has no data row \(only a header\)/),
  burst('missing columns', { 't.csv': 'Timestamp,Model\n1,x\n' }, '@/t.csv', /has no "Request tokens" or "Response tokens" columns/),
  burst(
    'all numbers bad',
    { 't.csv': `${HEADER}\n1,ChatGPT,x,2,3,l\n2,ChatGPT,1,-2,3,l\n` },
    '@/t.csv',
    /has no usable row: all 2 data rows were skipped \(line 2: Request tokens: "x" is not a number; line 3: Response tokens: -2 is negative\)/,
  ),
  burst(
    'all timestamps bad',
    { 't.csv': `${HEADER}\nnow,ChatGPT,1,2,3,l\n1e999,ChatGPT,1,2,3,l\n` },
    '@/t.csv',
    /has no usable row: all 2 data rows were skipped \(line 2: Timestamp: "now" is not a number; line 3: Timestamp: "1e999" is out of range\)/,
  ),
  burst('wrong field counts', { 't.csv': `${HEADER}\n1,2\n` }, '@/t.csv', /expected 6 fields, found 2/),
  burst(
    'every file useless',
    { 'a.csv': `${HEADER}\n`, 'b.csv': `${HEADER}\nx,y,z,1,2,3\n` },
    '@',
    /BurstGPT trace \(2 files\) has no usable row/,
  ),
  burst(
    'line over 1 MiB',
    { 't.csv': `${HEADER}\n${'9'.repeat(1_300_000)}\n` },
    '@/t.csv',
    /line 2 is longer than 1048576 characters; not a CSV trace/,
  ),
  burst(
    'binary junk',
    { 't.csv': Buffer.from([0x00, 0x01, 0xff, 0x0a, 0x02]) },
    '@/t.csv',
    /has no "Request tokens" or "Response tokens" columns/,
  ),
  // ---- I/O traces (replay): what src/trace/reader.ts refuses
  trace('FIFO', 't.csv', null, /trace '.*t\.csv' is not a regular file \(a FIFO, device or socket\)/),
  trace('FIFO named .zst', 't.csv.zst', null, /trace '.*t\.csv\.zst' is not a regular file \(a FIFO, device or socket\)/),
  trace('empty file', 't.csv', '', /empty file: the header line is missing/),
  trace('wrong header', 't.csv', 'a,b,c\n', /t\.csv:1: expected the header/),
  trace('bad operation', 't.csv', `${TRACE_HEADER}\n1,Copy,1,Tier-2,k,Prefill\n`, /t\.csv:2: bad Operation "Copy"/),
  trace('bad size', 't.csv', `${TRACE_HEADER}\n1,Write,-1,Tier-2,k,Prefill\n`, /t\.csv:2: bad Object_Size_Bytes "-1"/),
  trace('bad tier', 't.csv', `${TRACE_HEADER}\n1,Write,1,Tier-9,k,Prefill\n`, /bad Tier "Tier-9"/),
  trace('unterminated quote', 't.csv', `${TRACE_HEADER}\n1,Write,1,Tier-2,"k,Prefill`, /unterminated quoted field at the end of the file/),
  trace('record over 1 MiB', 't.csv', `${TRACE_HEADER}\n${'x'.repeat(1_200_000)}`, /t\.csv:2: a record longer than 1048576 characters/),
  trace('.zst that is plain text', 't.csv.zst', goodTrace, /I\/O trace '.*t\.csv\.zst': cannot be decompressed \(/),
  trace('truncated .zst', 't.csv.zst', zstdOf(goodTrace).subarray(0, 40), /cannot be decompressed \(/),
  trace('zstd magic then junk', 't.csv', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 9, 9, 9, 9, 9]), /cannot be decompressed \(/),
  trace('.zst of garbage text', 't.csv.zst', zstdOf('\u0000\u0001garbage\n'), /t\.csv\.zst:1: expected the header/),
];

/** Common flags of a run case: small and quick if it ever started, with its outputs inside `dir`. */
function runArgs(c: BadInput, dir: string): string[] {
  const given = c.args.map((a) => a.replace(/^@/, dir).replace(/=@/, `=${dir}`));
  if (given[0] === 'replay') return [...given, '--output', join(dir, 'out.json')];
  const base = [
    '--model',
    'tiny-1b',
    '--num-users',
    '2',
    '--duration',
    '2',
    '--gpu-mem-gb',
    '0',
    '--cpu-mem-gb',
    '0.01',
    '--generation-mode',
    'none',
    '--no-progress',
    '--max-requests',
    '4',
  ];
  const own = ['--output', join(dir, 'out.json'), '--cache-dir', join(dir, 'cache'), '--create-cache-dir'];
  // The case's own flags come last: the last value of a repeated flag wins.
  return [...base, ...(given.includes('--output') || given.includes('--cache-dir') ? [] : own), ...given];
}

function writeInputs(c: BadInput, dir: string): void {
  for (const [name, content] of Object.entries(c.files ?? {})) {
    const path = join(dir, name);
    if (content === null) execFileSync('mkfifo', [path]);
    else writeFileSync(path, content);
  }
}

interface Outcome {
  readonly code: number | string;
  readonly stderr: string;
}

/** main() in this process with stdout and stderr captured. */
async function inProcess(argv: readonly string[]): Promise<Outcome> {
  const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  let stderr = '';
  process.stdout.write = () => true;
  process.stderr.write = (chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  };
  try {
    return { code: await main(argv), stderr };
  } catch (e: unknown) {
    return { code: `threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, stderr };
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
  }
}

/** The real command in a child process, killed after `timeoutMs` (a hang fails instead of blocking). */
function spawned(argv: readonly string[], timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? `killed by ${signal ?? '?'} after ${timeoutMs} ms (a hang)`, stderr });
    });
  });
}

function checkOutcome(c: BadInput, dir: string, r: Outcome, inputs: readonly string[]): void {
  const where = `${c.name}: ${r.stderr.slice(0, 2000)}`;
  assert.equal(r.code, 2, where);
  const errors = r.stderr.split('\n').filter((l) => /^kv-cache( replay)?: error: /.test(l));
  assert.equal(errors.length, 1, `one error message: ${where}`);
  assert.match(r.stderr, c.expect, where);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `no stack trace: ${where}`);
  assert.ok(r.stderr.length < 8_000, `a short message (${r.stderr.length} characters): ${c.name}`);
  assert.equal(existsSync(join(dir, 'out.json')), false, `no results file: ${c.name}`);
  assert.equal(existsSync(join(dir, 'cache')), false, `no cache dir: ${c.name}`);
  assert.deepEqual(readdirSync(dir).sort(), [...inputs].sort(), `nothing else left behind: ${c.name}`);
}

test(`the corpus holds at least 100 bad inputs (${CASES.length})`, () => {
  assert.ok(CASES.length >= 100);
  assert.equal(new Set(CASES.map((c) => c.name)).size, CASES.length, 'case names are unique');
});

test('every bad input: exit 2, one message naming the problem, no stack trace, nothing left behind (in process)', () =>
  inTempDir(async (root) => {
    const failures: string[] = [];
    for (const [i, c] of CASES.entries()) {
      const dir = join(root, `case-${i}`);
      mkdirSync(dir);
      writeInputs(c, dir);
      const inputs = readdirSync(dir);
      const r = await inProcess(runArgs(c, dir));
      try {
        checkOutcome(c, dir, r, inputs);
      } catch (e: unknown) {
        failures.push(e instanceof Error ? e.message : String(e)); // every failing case at once
      }
    }
    assert.deepEqual(failures, []);
  }));

test('a sample through the real command, with a timeout (FIFOs, bombs, huge values, trace garbage)', () =>
  inTempDir(async (root) => {
    const sample = CASES.filter((c) =>
      /FIFO|alias bomb|30,000 keys|500 KB value|100 KB value|8×10\^21|header only|truncated \.zst|all timestamps bad/.test(c.name),
    );
    assert.ok(sample.length >= 10, `sample of ${sample.length}`);
    const runs = sample.map(async (c, i) => {
      const dir = join(root, `spawn-${i}`);
      mkdirSync(dir);
      writeInputs(c, dir);
      const inputs = readdirSync(dir);
      checkOutcome(c, dir, await spawned(runArgs(c, dir), 60_000), inputs);
    });
    await Promise.all(runs);
  }));
