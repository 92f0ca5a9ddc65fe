// The storage-full watch: the first failure the storage backend calls "full" stops the run once, with
// the space free at that moment in the warning; other tiers' and other classes' failures do not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageFullWatch } from '../../src/engine/storage-full.js';
import type { TierFailure } from '../../src/cache/tiered-cache.js';
import type { StorageFullness } from '../../src/tiers/storage-kind.js';
import { GiB } from '../../src/util/units.js';

const FULLNESS: StorageFullness = {
  where: '/mnt/x (xfs)',
  isFullError: (c) => c === 'ENOSPC',
  space: () => Promise.resolve({ freeBytes: GiB / 2, sizeBytes: 8 * GiB }),
};

const failure = (tier: 'cpu' | 'storage', error: 'ENOSPC' | 'EIO'): TierFailure => ({
  tier,
  operation: 'placement_write',
  error,
  cause: new Error(error),
});

test("only the storage tier's full errors count; the first is kept and the listener runs once", async () => {
  const watch = new StorageFullWatch(FULLNESS);
  let calls = 0;
  watch.listen(() => calls++);
  watch.onFailure(failure('cpu', 'ENOSPC'));
  watch.onFailure(failure('storage', 'EIO'));
  assert.equal(watch.full, false);
  assert.equal(await watch.warning(), undefined);
  watch.onFailure(failure('storage', 'ENOSPC'));
  watch.onFailure(failure('storage', 'ENOSPC'));
  assert.equal(watch.full, true);
  assert.equal(calls, 1);
  assert.equal(
    await watch.warning(),
    'storage full: a write to /mnt/x (xfs) failed with ENOSPC, 0.500 GiB free of 8.000 GiB at that moment; ' +
      'the measurement stopped there (stop_reason storage_full). Give --storage-capacity-gb below the free space, or use a larger file system',
  );
});

test('a listener added after the tier filled runs at once; unknown space is said so', async () => {
  const watch = new StorageFullWatch({ ...FULLNESS, space: () => Promise.reject(new Error('statfs failed')) });
  watch.onFailure(failure('storage', 'ENOSPC'));
  let calls = 0;
  watch.listen(() => calls++);
  assert.equal(calls, 1);
  assert.match((await watch.warning()) ?? '', /failed with ENOSPC, free space unknown at that moment/);
});
