// The machine context: host figures, and the cache dir's device and model resolved (storageDeviceOf,
// once per run) through a fake /sys tree built for the temp dir's real device number.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { captureMachine, storageUnderTest } from '../../src/engine/machine.js';
import { splitDevT, storageDeviceOf } from '../../src/metrics/diskstats.js';
import { TRACE_MODE_STORAGE } from '../../src/engine/tier-stack.js';
import { withTempDir } from '../util/temp-dir.js';

/** A /sys tree under `sys` where the device holding `dir` is a whole disk called `name`. */
async function fakeSys(sys: string, dir: string, name: string, model?: string): Promise<void> {
  const { major, minor } = splitDevT((await stat(dir, { bigint: true })).dev);
  const disk = join(sys, 'devices', 'test', 'block', name);
  await mkdir(join(disk, 'device'), { recursive: true });
  await writeFile(join(disk, 'dev'), `${major}:${minor}\n`);
  await mkdir(join(sys, 'dev', 'block'), { recursive: true });
  await symlink(disk, join(sys, 'dev', 'block', `${major}:${minor}`));
  await mkdir(join(sys, 'block', name, 'device'), { recursive: true });
  if (model !== undefined) await writeFile(join(sys, 'block', name, 'device', 'model'), model);
}

test('host figures and the cache dir device model (trimmed) from /sys', async () => {
  await withTempDir(async (dir) => {
    const sys = join(dir, 'sys');
    await fakeSys(sys, dir, 'fakedisk0', 'Fake Disk 9000    \n');
    const m = captureMachine({ dir, fileSystem: 'ext2/3/4', device: await storageDeviceOf(dir, sys) });
    assert.deepEqual(m.cacheDir, { fileSystem: 'ext2/3/4', blockDevice: 'fakedisk0', deviceModel: 'Fake Disk 9000' });
    assert.equal(m.cpuCount, availableParallelism());
    assert.equal(m.totalMemoryBytes, totalmem());
    assert.equal(m.kernelRelease, release());
    assert.equal(m.nodeVersion, process.version);
    assert.notEqual(m.cpuModel, '');
  });
});

test('a device without a model file, an unresolvable device, and trace mode', async () => {
  await withTempDir(async (dir) => {
    const sys = join(dir, 'sys');
    await fakeSys(sys, dir, 'virtdisk');
    assert.deepEqual(captureMachine({ dir, fileSystem: 'xfs', device: await storageDeviceOf(dir, sys) }).cacheDir, {
      fileSystem: 'xfs',
      blockDevice: 'virtdisk',
      deviceModel: null,
    });
    const empty = join(dir, 'empty-sys');
    await mkdir(empty);
    const unresolved = await storageDeviceOf(dir, empty);
    const { major, minor } = splitDevT((await stat(dir, { bigint: true })).dev);
    assert.deepEqual(unresolved, { kind: 'unresolved', path: dir, devT: { major, minor } });
    assert.deepEqual(captureMachine({ dir, fileSystem: 'tmpfs', device: unresolved }).cacheDir, {
      fileSystem: 'tmpfs',
      blockDevice: null,
      deviceModel: null,
    });
    assert.equal(captureMachine({ fileSystem: 'none', device: { kind: 'none', reason: 'trace mode' } }).cacheDir, null);
    assert.deepEqual(await storageDeviceOf(join(dir, 'missing'), sys), {
      kind: 'unresolved',
      path: join(dir, 'missing'),
      error: `ENOENT: no such file or directory, stat '${join(dir, 'missing')}'`,
    });
  });
});

test('the storage-under-test line: directory, file system, device and model; unknowns and trace mode said plainly', () => {
  const base = { cpuModel: 'x', cpuCount: 1, totalMemoryBytes: 1, kernelRelease: 'k', nodeVersion: 'v', ioBuffers: '2 MiB huge pages' };
  const known = { ...base, cacheDir: { fileSystem: 'xfs', blockDevice: 'nvme0n1', deviceModel: 'Fast NVMe' } };
  assert.equal(
    storageUnderTest(known, { dir: '/mnt/x', ioMode: 'direct' }),
    'Storage under test: /mnt/x — file system xfs, device nvme0n1 (Fast NVMe), direct I/O; buffers in 2 MiB huge pages',
  );
  const noModel = { ...base, cacheDir: { fileSystem: 'ext2/3/4', blockDevice: 'vda', deviceModel: null } };
  assert.equal(
    storageUnderTest(noModel, { dir: '/d', ioMode: 'buffered' }),
    'Storage under test: /d — file system ext2/3/4, device vda (model unknown), buffered I/O; buffers in 2 MiB huge pages',
  );
  const noDevice = { ...base, cacheDir: { fileSystem: 'tmpfs', blockDevice: null, deviceModel: null } };
  assert.equal(
    storageUnderTest(noDevice, { dir: '/t', ioMode: 'buffered' }),
    'Storage under test: /t — file system tmpfs, block device not resolvable (tmpfs, overlay, network file system or RAID?), buffered I/O; buffers in 2 MiB huge pages',
  );
  assert.equal(
    storageUnderTest({ ...base, cacheDir: null }, TRACE_MODE_STORAGE),
    'Storage under test: none (trace mode: null tiers, no device I/O)',
  );
});
