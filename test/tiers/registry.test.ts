// The storage backend registry: its rows are --storage-backend's choices, the default is `file`, and
// a kind's capacity rule is checked at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_STORAGE_BACKEND, STORAGE_BACKENDS, STORAGE_KINDS, storageBackendChecks, storageKind } from '../../src/tiers/registry.js';
import { FILE_STORAGE } from '../../src/tiers/file-kind.js';
import { MEMORY_STORAGE } from '../../src/tiers/memory-kind.js';
import { S3_STORAGE } from '../../src/tiers/s3-kind.js';

test('one row per kind, in table order; the default is file', () => {
  assert.deepEqual(STORAGE_BACKENDS, ['file', 'memory', 's3']);
  assert.equal(DEFAULT_STORAGE_BACKEND, 'file');
  assert.equal(storageKind('file'), FILE_STORAGE);
  assert.equal(storageKind('memory'), MEMORY_STORAGE);
  assert.equal(storageKind('s3'), S3_STORAGE);
  for (const name of STORAGE_BACKENDS) assert.notEqual(STORAGE_KINDS[name].help, '', name);
});

test('capacity: the file kind takes a share of the free space by default; the memory kind needs --storage-capacity-gb', () => {
  const none = { problems: [], warnings: [] };
  assert.deepEqual(storageBackendChecks('file', 0, undefined), none);
  assert.deepEqual(storageBackendChecks('file', 2, '/mnt/x'), none);
  assert.deepEqual(storageBackendChecks('memory', 0, undefined), {
    problems: ['--storage-backend memory needs --storage-capacity-gb > 0: RAM has no free space to take a share of'],
    warnings: [],
  });
  assert.deepEqual(storageBackendChecks('memory', 0.5, undefined), none);
});

test('--cache-dir with a kind that keeps no files is said to be unused', () => {
  assert.deepEqual(storageBackendChecks('memory', 1, '/mnt/x'), {
    problems: [],
    warnings: ['--cache-dir /mnt/x is not used: --storage-backend memory keeps no files'],
  });
});
