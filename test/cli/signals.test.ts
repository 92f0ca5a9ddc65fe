import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { REPEAT_WINDOW_MS, SignalGuard, signalExitCode } from '../../src/cli/signals.js';
import type { SignalHost } from '../../src/cli/signals.js';
import { ManualClock } from '../../src/util/clock.js';

/** A process stand-in: signals are emitted by the test, lines and exits are recorded. */
function fakeHost(): { host: SignalHost; source: EventEmitter; lines: string[]; exits: number[] } {
  const source = new EventEmitter();
  const lines: string[] = [];
  const exits: number[] = [];
  return {
    source,
    lines,
    exits,
    host: {
      on: (s, l) => source.on(s, l),
      off: (s, l) => source.off(s, l),
      say: (line) => lines.push(line),
      exit: (code) => exits.push(code),
    },
  };
}

/** A guard that has begun its work, on a clock the test moves. */
function begun(prefix = 'kv-cache'): { f: ReturnType<typeof fakeHost>; clock: ManualClock; guard: SignalGuard; stop: AbortSignal } {
  const f = fakeHost();
  const clock = new ManualClock();
  const guard = new SignalGuard(prefix, f.host, clock).install();
  return { f, clock, guard, stop: guard.begin() };
}

test('signals: 130 for SIGINT, 143 for SIGTERM', () => {
  assert.equal(signalExitCode('SIGINT'), 130);
  assert.equal(signalExitCode('SIGTERM'), 143);
});

test('signals: before the work started, a signal exits at once, saying nothing was created', () => {
  const f = fakeHost();
  new SignalGuard('kv-cache', f.host).install();
  f.source.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(f.exits, [143]);
  assert.deepEqual(f.lines, ['kv-cache: SIGTERM before the work started: exiting; nothing was created or written']);
});

test('signals: once started, the first signal aborts the work; another signal after the window exits at once', async () => {
  const { f, clock, guard, stop } = begun('kv-cache replay');
  assert.equal(guard.exitCode, 0);
  f.source.emit('SIGINT', 'SIGINT');
  assert.equal(stop.aborted, true);
  assert.deepEqual(f.exits, []);
  assert.equal(guard.received, 'SIGINT');
  assert.equal(guard.exitCode, 130);
  clock.advance(REPEAT_WINDOW_MS);
  f.source.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(f.exits, [143]);
  assert.equal(f.lines.length, 2);
  assert.match(f.lines[0] ?? '', /kv-cache replay: SIGINT: stopping, saving the results gathered so far/);
  assert.equal(f.lines[1], 'kv-cache replay: signal again (SIGTERM): exiting at once');
});

test('signals: the same signal again within the window is the same stop request (timeout delivers SIGTERM twice)', () => {
  const { f, clock, guard, stop } = begun();
  f.source.emit('SIGTERM', 'SIGTERM');
  clock.advance(1);
  f.source.emit('SIGTERM', 'SIGTERM');
  clock.advance(REPEAT_WINDOW_MS - 2); // 1 ms short of the window's end
  f.source.emit('SIGTERM', 'SIGTERM');
  assert.equal(stop.aborted, true);
  assert.deepEqual(f.exits, [], 'no forced exit');
  assert.equal(guard.exitCode, 143, 'the normal exit code of a stop by SIGTERM');
  assert.equal(f.lines.length, 2, 'the repeat is said once');
  assert.equal(
    f.lines[1],
    'kv-cache: SIGTERM again within 1 s of the first: the same stop request (a launcher delivering it twice); still saving — signal again to exit at once',
  );
});

test('signals: the window is counted from the first signal, so repeats cannot stretch it', () => {
  const { f, clock } = begun();
  f.source.emit('SIGINT', 'SIGINT');
  clock.advance(600);
  f.source.emit('SIGINT', 'SIGINT'); // absorbed
  clock.advance(400); // the first is now REPEAT_WINDOW_MS old
  f.source.emit('SIGINT', 'SIGINT');
  assert.deepEqual(f.exits, [130]);
});

test('signals: a different signal within the window forces the exit (a second sender, not a repeat)', () => {
  const { f, clock } = begun();
  f.source.emit('SIGTERM', 'SIGTERM');
  clock.advance(1);
  f.source.emit('SIGINT', 'SIGINT');
  assert.deepEqual(f.exits, [130]);
});

test('signals: SIGTERM, then another 2 s later: the force-quit steps run in order, their lines said, then the exit', () => {
  const { f, clock, guard } = begun();
  const ran: string[] = [];
  guard.atForceQuit(() => {
    ran.push('files');
    return ['removed 3 entry file(s) of this run from /c'];
  });
  guard.atForceQuit(() => {
    ran.push('broken');
    throw new Error('disk gone');
  });
  const removeLast = guard.atForceQuit(() => {
    ran.push('never');
    return [];
  });
  guard.atForceQuit(() => {
    ran.push('results');
    return ['results already saved to r.json'];
  });
  removeLast();
  f.source.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(ran, [], 'nothing forced by the first signal');
  clock.advance(2000);
  f.source.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(ran, ['files', 'broken', 'results'], 'a failing step does not skip the next; a removed one does not run');
  assert.deepEqual(f.lines.slice(1), [
    'kv-cache: signal again (SIGTERM): exiting at once',
    'kv-cache: removed 3 entry file(s) of this run from /c',
    'kv-cache: while exiting: disk gone',
    'kv-cache: results already saved to r.json',
  ]);
  assert.deepEqual(f.exits, [143]);
});

test('signals: uninstall removes both handlers', () => {
  const f = fakeHost();
  const guard = new SignalGuard('kv-cache', f.host).install();
  assert.equal(f.source.listenerCount('SIGINT') + f.source.listenerCount('SIGTERM'), 2);
  guard.uninstall();
  assert.equal(f.source.listenerCount('SIGINT') + f.source.listenerCount('SIGTERM'), 0);
});
