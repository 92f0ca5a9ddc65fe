import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadValidationTrace, parseValidationTrace, traceStats, ValidationTraceError } from '../../src/workload/validation-trace.js';

function rec(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    timestamp: 1,
    request_id: 'r',
    user_id: 'u',
    context_tokens: 100,
    generation_tokens: 10,
    phase: 'prefill',
    cache_hit: false,
    cache_tier: 'storage',
    read_bytes: 0,
    write_bytes: 1000,
    read_latency_ms: 0,
    write_latency_ms: 2,
    model_name: 'm',
    ...over,
  };
}

test('trace stats: hit rate, read/write ratio, bytes per request and the context distribution', () => {
  const records = parseValidationTrace(
    JSON.stringify([
      rec({ context_tokens: 100, cache_hit: true, read_bytes: 3000, write_bytes: 0 }),
      rec({ context_tokens: 200 }),
      rec({ context_tokens: 300 }),
      rec({ context_tokens: 400, cache_hit: true, read_bytes: 1000, write_bytes: 0, conversation_id: null, turn_number: 2 }),
    ]),
    'x.json',
  );
  const s = traceStats(records);
  assert.equal(s.totalRequests, 4);
  assert.equal(s.cacheHitRate, 0.5);
  assert.equal(s.readBytes, 4000);
  assert.equal(s.writeBytes, 2000);
  assert.equal(s.readWriteRatio, 2);
  assert.equal(s.bytesPerRequest, 1500);
  assert.deepEqual(s.contextTokens, { mean: 250, p50: 200, p95: 400 });
  assert.equal(s.generationTokensMean, 10);
});

test('malformed traces are input errors naming the file, the record and the field', () => {
  const bad = (text: string): string => {
    try {
      parseValidationTrace(text, 'trace.json');
    } catch (e) {
      assert.ok(e instanceof ValidationTraceError);
      return e.message;
    }
    assert.fail('accepted');
  };
  assert.match(bad('{not json'), /validation trace 'trace.json': not valid JSON/);
  assert.match(bad('{"a": 1}'), /the top level/);
  assert.match(bad('[]'), /holds no records/);
  assert.match(bad(JSON.stringify([rec(), rec({ context_tokens: -5 })])), /record 1 field 'context_tokens'/);
  const { write_bytes: _w, ...missing } = rec();
  assert.match(bad(JSON.stringify([missing])), /record 0 field 'write_bytes' is missing/);
  assert.match(bad(JSON.stringify([rec({ cache_hit: 'yes' })])), /record 0 field 'cache_hit'/);
});

test('the file must exist and be a regular file (a FIFO is refused before it is opened)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kv-vt-'));
  try {
    assert.throws(() => loadValidationTrace(join(dir, 'none.json')), /file not found/);
    mkdirSync(join(dir, 'd'));
    assert.throws(() => loadValidationTrace(join(dir, 'd')), /is a directory/);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    assert.throws(() => loadValidationTrace(join(dir, 'fifo')), /is not a regular file/);
    writeFileSync(join(dir, 'ok.json'), JSON.stringify([rec()]));
    assert.equal(loadValidationTrace(join(dir, 'ok.json')).totalRequests, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
