#!/usr/bin/env node
// Bootstrap, in CommonJS on purpose: libuv sizes its threadpool (where all file I/O runs) at its first
// use, and loading ES modules already uses it. Loading this file does not, so the size set here holds.
'use strict';
const MAX_POOL = 256;
/** READS_IN_FLIGHT of src/tiers/direct-io.ts (this file loads nothing of the build). */
const READS_IN_FLIGHT = 2;
/** The engine's cap on concurrent requests (MAX_WORKERS in src/engine/setup.ts). */
const MAX_WORKERS = 500;
/** The value of `name` as the flag parser takes it: the last occurrence wins. */
function flagValue(argv, name, fallback) {
  let value = fallback;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name && i + 1 < argv.length) value = Number(argv[i + 1]);
    else if (argv[i].startsWith(name + '=')) value = Number(argv[i].slice(name.length + 1));
  }
  return value;
}
if (process.env.UV_THREADPOOL_SIZE === undefined) {
  const argv = process.argv.slice(2);
  // Autoscaling may add users up to a maximum set in a config file: size for the cap then.
  const users = argv.includes('--enable-autoscaling') ? MAX_WORKERS : flagValue(argv, '--num-users', 100);
  const concurrent = Number.isFinite(users) && users > 0 ? Math.min(users, MAX_WORKERS) : 100;
  // Every user may have READS_IN_FLIGHT (src/tiers/direct-io.ts) reads in flight at once; a pool sized
  // for one call per user queued reads behind its threads (kvcache_bench.file_io saw it), inside their latencies.
  process.env.UV_THREADPOOL_SIZE = String(Math.min(MAX_POOL, Math.max(4, READS_IN_FLIGHT * concurrent + 8)));
}
// Signals: the handlers are installed here, before anything else, and never swapped (a signal
// pending while a handler is replaced can be lost). Until main() listens on the relay, a signal
// means nothing has been created yet: say so and leave. Then main() decides (src/cli/signals.ts).
const { EventEmitter } = require('node:events');
const relay = new EventEmitter();
/** Set once main() has settled: its results are written and the process is only draining. */
let finished = false;
function onSignal(signal) {
  if (relay.listenerCount(signal) > 0) return void relay.emit(signal, signal);
  if (finished) {
    // A launcher's repeat of the stop that main() already honoured: nothing is left to save or remove.
    process.stderr.write(`kv-cache: ${signal} after the work finished: exiting\n`);
    return void process.exit(process.exitCode ?? 0);
  }
  process.stderr.write(`kv-cache: ${signal} before the work started: exiting; nothing was created or written\n`);
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
import('../dist/src/cli/main.js')
  .then((m) => m.main(process.argv.slice(2), relay))
  .then(
    (code) => {
      process.exitCode = code;
      finished = true;
    },
    (err) => {
      process.stderr.write(`kv-cache: internal error: ${err && err.stack ? err.stack : String(err)}\n`);
      process.exitCode = 1;
      finished = true;
    },
  );
