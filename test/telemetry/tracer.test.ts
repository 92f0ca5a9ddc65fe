// The tracer's ways to fail, each one message naming the cause and the fix (not root, no bpftrace,
// an attach error), and its start/stop protocol, against stand-in executables: no root needed.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { firstError, READY_MARKER, startTrace } from '../../src/telemetry/tracer.js';
import { startRunTracing } from '../../src/telemetry/session.js';
import { TRACE_MODE_STORAGE } from '../../src/engine/tier-stack.js';
import { withTempDir } from '../util/temp-dir.js';

const clock = { now: (): number => 0 };

/** A directory that looks like a mounted tracefs. */
function fakeTracefs(dir: string): string {
  const t = join(dir, 'tracing');
  mkdirSync(join(t, 'events'), { recursive: true });
  return t;
}

function script(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

test('not root: one message with the fix, nothing started', async () => {
  const r = await startTrace('', { clock, isRoot: () => false, bpftrace: '/nonexistent/bpftrace' });
  assert.deepEqual(r, { ok: false, message: 'block-layer tracing needs root (fix: run kv-cache as root, e.g. with sudo)' });
});

test('no bpftrace: one message naming the executable and how to install it', async () => {
  await withTempDir(async (dir) => {
    const r = await startTrace('', {
      clock,
      isRoot: () => true,
      tracefsDirs: [fakeTracefs(dir)],
      bpftrace: join(dir, 'missing', 'bpftrace'),
    });
    assert.deepEqual(r, {
      ok: false,
      message: `${join(dir, 'missing', 'bpftrace')} not found (fix: install bpftrace, e.g. apt-get install bpftrace)`,
    });
  });
});

test('attach failure: bpftrace exits before its probes are attached; its first real ERROR line is named', async () => {
  await withTempDir(async (dir) => {
    const fake = script(
      dir,
      'bpftrace',
      `echo 'ERROR: Unknown error -1: couldn'"'"'t set RLIMIT_MEMLOCK for bpftrace.' >&2\necho 'ERROR: tracepoint not found: block:block_rq_issue' >&2\nexit 1`,
    );
    const r = await startTrace('', { clock, isRoot: () => true, tracefsDirs: [fakeTracefs(dir)], bpftrace: fake });
    assert.deepEqual(r, {
      ok: false,
      message:
        'bpftrace could not attach its probes: ERROR: tracepoint not found: block:block_rq_issue (fix: a kernel with BTF and block/syscalls tracepoints)',
    });
  });
});

test('start waits for the ready marker; stop sends SIGINT and returns what was printed after it', async () => {
  await withTempDir(async (dir) => {
    const fake = script(
      dir,
      'bpftrace',
      `trap 'printf "\\n@n: 3\\n"; exit 0' INT\necho 'Attaching 2 probes...'\necho '${READY_MARKER}'\nwhile true; do sleep 0.05; done`,
    );
    const r = await startTrace('', { clock, isRoot: () => true, tracefsDirs: [fakeTracefs(dir)], bpftrace: fake });
    assert.equal(r.ok, true);
    if (!r.ok) return;
    const s = await r.trace.stop();
    assert.deepEqual(s, { output: '\n\n@n: 3\n', windowSec: 0, killed: false });
  });
});

test("the window runs from attach, or from restartWindow (a multi-rank run's start barrier) to stop", async () => {
  await withTempDir(async (dir) => {
    const fake = script(dir, 'bpftrace', `trap 'exit 0' INT\necho '${READY_MARKER}'\nwhile true; do sleep 0.05; done`);
    let now = 1_000;
    const manual = { now: (): number => now };
    const opts = { clock: manual, isRoot: () => true, tracefsDirs: [fakeTracefs(dir)], bpftrace: fake };
    const plain = await startTrace('', opts);
    assert.ok(plain.ok);
    now += 4_000;
    assert.equal((await plain.trace.stop()).windowSec, 4);
    const restarted = await startTrace('', opts);
    assert.ok(restarted.ok);
    now += 5_000; // waiting at the barrier
    restarted.trace.restartWindow();
    now += 2_500;
    assert.equal((await restarted.trace.stop()).windowSec, 2.5);
  });
});

test('firstError skips the RLIMIT_MEMLOCK notice', () => {
  assert.equal(firstError("ERROR: couldn't set RLIMIT_MEMLOCK\n"), undefined);
  assert.equal(firstError('x\nERROR: boom\n'), 'ERROR: boom');
});

test('--enable-latency-tracing in trace mode: off, with the reason, and the run goes on', async () => {
  const s = await startRunTracing(TRACE_MODE_STORAGE, { clock });
  assert.equal(s.active, false);
  assert.deepEqual(s.warnings, [
    'latency tracing unavailable: trace mode (--io-trace-log) does no device I/O; the run continued without it',
  ]);
  assert.deepEqual(await s.stop(), { failure: 'trace mode (--io-trace-log) does no device I/O' });
});

/** A stand-in for SignalGuard.atForceQuit: the steps registered now. */
function forceQuitSteps(): { steps: Set<() => readonly string[]>; atForceQuit: (step: () => readonly string[]) => () => void } {
  const steps = new Set<() => readonly string[]>();
  return { steps, atForceQuit: (step) => (steps.add(step), () => void steps.delete(step)) };
}

/** Waits for `cond` on the event loop (a spawn, an exit), at most 1,000 turns; whether it came true. */
async function until(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  return cond();
}

test('a force-quit kills bpftrace at once, attached or still attaching; the step is forgotten once it exited (issue 35)', async () => {
  await withTempDir(async (dir) => {
    const tracefs = fakeTracefs(dir);
    // Attached: it ignores SIGINT, so only the force-quit's SIGKILL ends it.
    const stubborn = script(dir, 'bpftrace', `trap '' INT\necho '${READY_MARKER}'\nwhile true; do sleep 0.05; done`);
    const fq = forceQuitSteps();
    const r = await startTrace('', { clock, isRoot: () => true, tracefsDirs: [tracefs], bpftrace: stubborn, atForceQuit: fq.atForceQuit });
    assert.ok(r.ok);
    assert.equal(fq.steps.size, 1, 'registered from the spawn on');
    const said = [...fq.steps].flatMap((step) => step());
    assert.match(said[0] ?? '', /^stopped bpftrace \(pid \d+\)$/);
    assert.equal((await r.trace.stop()).output, '\n', 'it exited (stop awaited its exit): nothing after the marker');
    assert.equal(fq.steps.size, 0, 'forgotten once it exited');

    // Still attaching (no ready marker yet): the force-quit kills it too, and the start reports why.
    const silent = script(dir, 'bpftrace-silent', 'while true; do sleep 0.05; done');
    const attaching = forceQuitSteps();
    const starting = startTrace('', {
      clock,
      isRoot: () => true,
      tracefsDirs: [tracefs],
      bpftrace: silent,
      atForceQuit: attaching.atForceQuit,
    });
    assert.ok(await until(() => attaching.steps.size === 1), 'a force-quit step registered while attaching');
    for (const step of attaching.steps) step();
    const failed = await starting;
    assert.deepEqual(failed, {
      ok: false,
      message: 'bpftrace could not attach its probes: it exited with SIGKILL (fix: a kernel with BTF and block/syscalls tracepoints)',
    });
    assert.equal(attaching.steps.size, 0);
  });
});
