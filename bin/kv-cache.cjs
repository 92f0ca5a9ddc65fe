#!/usr/bin/env node
// Bootstrap, in CommonJS on purpose: libuv sizes its threadpool (where all file I/O runs) at its first
// use, and loading ES modules already uses it. Loading this file does not, so the size set here holds.
'use strict';
const MAX_POOL = 256;
function flagValue(argv, name, fallback) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name && i + 1 < argv.length) return Number(argv[i + 1]);
    if (argv[i].startsWith(name + '=')) return Number(argv[i].slice(name.length + 1));
  }
  return fallback;
}
if (process.env.UV_THREADPOOL_SIZE === undefined) {
  const users = flagValue(process.argv.slice(2), '--num-users', 100);
  const concurrent = Number.isFinite(users) && users > 0 ? Math.min(users, 500) : 100;
  process.env.UV_THREADPOOL_SIZE = String(Math.min(MAX_POOL, Math.max(4, concurrent + 8)));
}
import('../dist/src/cli/main.js').then((m) => m.main(process.argv.slice(2))).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`kv-cache: internal error: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
