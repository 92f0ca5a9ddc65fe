import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { SignalGuard, signalExitCode } from '../../src/cli/signals.js';
import type { SignalHost } from '../../src/cli/signals.js';

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

test('signals: once started, the first signal aborts the work, the second exits at once', () => {
  const f = fakeHost();
  const guard = new SignalGuard('kv-cache replay', f.host).install();
  const stop = guard.begin();
  assert.equal(guard.exitCode, 0);
  f.source.emit('SIGINT', 'SIGINT');
  assert.equal(stop.aborted, true);
  assert.deepEqual(f.exits, []);
  assert.equal(guard.received, 'SIGINT');
  assert.equal(guard.exitCode, 130);
  f.source.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(f.exits, [143]);
  assert.equal(f.lines.length, 2);
  assert.match(f.lines[0] ?? '', /kv-cache replay: SIGINT: stopping, saving the results gathered so far/);
  assert.match(f.lines[1] ?? '', /^kv-cache replay: second signal \(SIGTERM\): exiting at once/);
});

test('signals: uninstall removes both handlers', () => {
  const f = fakeHost();
  const guard = new SignalGuard('kv-cache', f.host).install();
  assert.equal(f.source.listenerCount('SIGINT') + f.source.listenerCount('SIGTERM'), 2);
  guard.uninstall();
  assert.equal(f.source.listenerCount('SIGINT') + f.source.listenerCount('SIGTERM'), 0);
});
