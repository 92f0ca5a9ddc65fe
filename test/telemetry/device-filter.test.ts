// The block-probe filter from the storage device the run resolved once: a resolved disk filters on
// its dev_t; a path on no single disk traces every device, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deviceFilterOf } from '../../src/telemetry/device-filter.js';

test('a resolved disk is filtered on; an unresolved path traces every device with the reason', () => {
  const device = { name: 'nvme0n1', major: 259, minor: 0, chain: ['nvme0n1p2', 'nvme0n1'] };
  assert.deepEqual(deviceFilterOf({ kind: 'device', device, model: 'Fast NVMe' }), { kind: 'device', ...device });
  assert.deepEqual(deviceFilterOf({ kind: 'unresolved', path: '/mnt/t', devT: { major: 0, minor: 42 } }), {
    kind: 'all',
    reason: '/mnt/t (device 0:42) is on no single block device (tmpfs, NFS, FUSE, overlay, or md/dm over several disks)',
  });
  assert.deepEqual(deviceFilterOf({ kind: 'unresolved', path: '/gone', error: 'ENOENT' }), {
    kind: 'all',
    reason: '/gone (ENOENT) is on no single block device (tmpfs, NFS, FUSE, overlay, or md/dm over several disks)',
  });
});
