// /proc/diskstats parsing, dev_t decoding and sysfs resolution on fixed inputs (plus one live check).
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  DiskWatch,
  deviceForPath,
  diskDelta,
  parseDiskStats,
  readDiskStats,
  resolveBlockDevice,
  splitDevT,
} from '../../src/metrics/diskstats.js';

const SAMPLE = [
  '   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0',
  ' 254       0 vda 5129 3124 363554 1371 731 4240 363832 1000 2 884 2515 3044 89 38688 143 4 7',
  ' 259       1 nvme0n1p1 10 0 80 1 20 0 160 2 0 3 3',
  'garbage',
  '',
].join('\n');

test('parseDiskStats reads 20-, 18- and 14-field lines; sectors are 512 bytes', () => {
  const rows = parseDiskStats(SAMPLE);
  assert.deepEqual(
    rows.map((r) => r.name),
    ['loop0', 'vda', 'nvme0n1p1'],
  );
  const vda = rows[1];
  assert.ok(vda !== undefined);
  assert.equal(vda.major, 254);
  assert.equal(vda.readOps, 5129);
  assert.equal(vda.readMerges, 3124);
  assert.equal(vda.readBytes, 363554 * 512);
  assert.equal(vda.writeOps, 731);
  assert.equal(vda.writeBytes, 363832 * 512);
  assert.equal(vda.inFlight, 2);
  assert.equal(vda.busyMs, 884);
  assert.equal(vda.discardOps, 3044);
  assert.equal(vda.discardBytes, 38688 * 512);
  assert.equal(vda.flushOps, 4);
  const old = rows[2];
  assert.ok(old !== undefined);
  assert.equal(old.writeBytes, 160 * 512);
  assert.equal(old.discardBytes, 0);
  assert.equal(old.flushOps, 0);
});

test('diskDelta subtracts counters and keeps the later in-flight count', () => {
  const [a] = parseDiskStats(' 8 0 sda 10 1 100 5 20 2 200 6 3 50 60');
  const [b] = parseDiskStats(' 8 0 sda 15 1 300 7 21 2 208 9 0 70 90');
  assert.ok(a !== undefined && b !== undefined);
  const d = diskDelta(a, b);
  assert.equal(d.readOps, 5);
  assert.equal(d.readBytes, 200 * 512);
  assert.equal(d.writeBytes, 8 * 512);
  assert.equal(d.busyMs, 20);
  assert.equal(d.inFlight, 0);
  const [other] = parseDiskStats(' 8 16 sdb 0 0 0 0 0 0 0 0 0 0 0');
  assert.ok(other !== undefined);
  assert.throws(() => diskDelta(a, other));
});

test('splitDevT decodes glibc dev_t', () => {
  assert.deepEqual(splitDevT(0xfe00n), { major: 254, minor: 0 });
  assert.deepEqual(splitDevT(0x10301n), { major: 259, minor: 1 }); // nvme0n1p1 style
  const makedev = (ma: bigint, mi: bigint): bigint =>
    ((ma & 0xfffn) << 8n) | ((ma & ~0xfffn) << 32n) | (mi & 0xffn) | ((mi & ~0xffn) << 12n);
  assert.deepEqual(splitDevT(makedev(0x1005n, 0x20203n)), { major: 0x1005, minor: 0x20203 });
});

test('resolveBlockDevice: partition → disk, one-slave dm → disk, two slaves → undefined', async () => {
  const sys = await mkdtemp(join(tmpdir(), 'fake-sys-'));
  try {
    const mk = (rel: string, dev?: string, partition = false): void => {
      mkdirSync(join(sys, rel), { recursive: true });
      if (dev !== undefined) writeFileSync(join(sys, rel, 'dev'), `${dev}\n`);
      if (partition) writeFileSync(join(sys, rel, 'partition'), '1\n');
    };
    mk('devices/pci/block/sda', '8:0');
    mk('devices/pci/block/sda/sda2', '8:2', true);
    mk('devices/pci/block/sdb', '8:16');
    mk('devices/virtual/block/dm-0', '253:0');
    mk('devices/virtual/block/dm-0/slaves');
    mk('devices/virtual/block/md0', '9:0');
    mk('devices/virtual/block/md0/slaves');
    mk('dev/block');
    symlinkSync('../../../../pci/block/sda/sda2', join(sys, 'devices/virtual/block/dm-0/slaves/sda2'));
    symlinkSync('../../../../pci/block/sda/sda2', join(sys, 'devices/virtual/block/md0/slaves/sda2'));
    symlinkSync('../../../../pci/block/sdb', join(sys, 'devices/virtual/block/md0/slaves/sdb'));
    symlinkSync('../../devices/pci/block/sda/sda2', join(sys, 'dev/block/8:2'));
    symlinkSync('../../devices/virtual/block/dm-0', join(sys, 'dev/block/253:0'));
    symlinkSync('../../devices/virtual/block/md0', join(sys, 'dev/block/9:0'));

    assert.deepEqual(await resolveBlockDevice(8, 2, sys), {
      name: 'sda',
      major: 8,
      minor: 0,
      chain: ['sda2', 'sda'],
    });
    assert.deepEqual(await resolveBlockDevice(253, 0, sys), {
      name: 'sda',
      major: 8,
      minor: 0,
      chain: ['dm-0', 'sda2', 'sda'],
    });
    assert.equal(await resolveBlockDevice(9, 0, sys), undefined);
    assert.equal(await resolveBlockDevice(0, 27, sys), undefined); // tmpfs-like: no block device
  } finally {
    await rm(sys, { recursive: true, force: true });
  }
});

test('live: the temp dir device, if any, has readable counters', async () => {
  const dev = await deviceForPath(tmpdir());
  if (dev === undefined) return;
  const c = await readDiskStats(dev.name);
  assert.ok(c.readBytes >= 0 && c.writeBytes >= 0);
  const watch = await DiskWatch.forPath(tmpdir());
  assert.ok(watch !== undefined);
  const { result, delta } = await watch.measure(async () => 42);
  assert.equal(result, 42);
  assert.ok(delta.readBytes >= 0 && delta.writeBytes >= 0);
  await assert.rejects(readDiskStats('no-such-device-xyz'));
});
