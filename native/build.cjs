#!/usr/bin/env node
// Builds the native helpers with npm's own node-gyp, unless the built files are newer than their
// sources: huge-pages.c → build/Release/huge_pages.node, payload-fill.c → build/Release/payload_fill.node,
// block-io.c → build/Release/block_io.node.
// Optional by design: without a C compiler (or off Linux) the tool still runs, with its I/O buffers in
// ordinary pages and its payload fills on worker threads, and says so in every result
// (kvcache_bench.machine.io_buffers, kvcache_bench.payload_generation.filler). So a failed build prints
// one line and exits 0.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, statSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');

const here = __dirname;
const targets = ['huge_pages.node', 'payload_fill.node', 'block_io.node'].map((f) => join(here, 'build', 'Release', f));
const sources = ['huge-pages.c', 'payload-fill.c', 'block-io.c', 'binding.gyp', 'build.cjs'].map((f) => join(here, f));

function upToDate() {
  if (!targets.every((t) => existsSync(t))) return false;
  const built = Math.min(...targets.map((t) => statSync(t).mtimeMs));
  return sources.every((s) => statSync(s).mtimeMs <= built);
}

/** npm's node-gyp: the one npm runs scripts with, else the one beside this Node's npm. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    resolve(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((c) => c !== undefined && c !== '' && existsSync(c));
}

/** Node's own headers: npm's setting, else beside this Node (no download: the machine has no internet). */
function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = resolve(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : undefined;
}

function skip(why) {
  process.stderr.write(
    `kv-cache build: native helpers not built (${why}); I/O buffers will use ordinary 4 KiB pages and payload fills worker threads\n`,
  );
}

if (process.platform !== 'linux') skip('not Linux');
else if (!upToDate()) {
  const gyp = nodeGyp();
  const dir = nodeDir();
  if (gyp === undefined) skip("npm's node-gyp not found");
  else if (dir === undefined) skip("Node's headers not found (set npm's nodedir)");
  else {
    const run = spawnSync(process.execPath, [gyp, 'rebuild', `--directory=${here}`, `--nodedir=${dir}`], { encoding: 'utf8' });
    if (run.status !== 0) {
      const last = `${run.stderr ?? ''}`.trim().split('\n').filter(Boolean).slice(-1)[0] ?? run.error?.message ?? 'unknown';
      skip(`node-gyp failed: ${last}`);
    }
  }
}
