// `kv-cache replay TRACE`: re-issues the writes, reads and deletes of an I/O trace (ours, or the
// reference's) against a cache directory, as fast as possible with N concurrent operations or paced
// by the trace's timestamps, and measures them like a run's storage tier.
import { setTimeout as sleep } from 'node:timers/promises';
import { DiskWatch, diskDelta } from '../metrics/diskstats.js';
import type { DiskDelta } from '../metrics/diskstats.js';
import { Recorder } from '../metrics/recorder.js';
import type { RecorderSnapshot } from '../metrics/recorder.js';
import type { IoMode } from '../settings/choices.js';
import { readTrace } from '../trace/reader.js';
import type { TraceRow } from '../trace/format.js';
import type { Clock } from '../util/clock.js';
import { KeyedMutex } from '../util/lock.js';
import { openFileStorage, slotCounts, tearDown } from './tier-stack.js';
import { captureMachine } from './machine.js';
import type { MachineContext } from '../metrics/result.js';

export interface ReplayOptions {
  readonly tracePath: string;
  readonly cacheDir?: string;
  readonly ioMode: IoMode;
  /** Operations in flight at once (as fast as possible mode). */
  readonly concurrency: number;
  /** Issue each row at its trace time offset instead of as fast as possible. */
  readonly paced: boolean;
  /** Replay rows of every tier onto storage; by default only the storage tier's (Tier-2) rows. */
  readonly allTiers: boolean;
  readonly seed: number;
}

export interface ReplayCounts {
  rows: number;
  writes: number;
  reads: number;
  deletes: number;
  writeBytes: number;
  readBytes: number;
  /** Rows of other tiers, not replayed (see allTiers). */
  skippedOtherTiers: number;
  /** Reads or deletes of a key the replay never wrote (a trace that starts mid-run). */
  missingKeys: number;
}

export interface ReplayResult {
  readonly counts: ReplayCounts;
  /** The storage tier's operations, as a run's recorder holds them. */
  readonly recorded: RecorderSnapshot;
  readonly elapsedSec: number;
  readonly storage: { readonly dir: string; readonly ioMode: string; readonly fileSystem: string };
  readonly device?: { readonly name: string; readonly delta: DiskDelta };
  readonly machine: MachineContext;
}

export async function replayTrace(o: ReplayOptions, clock: Clock): Promise<ReplayResult> {
  const files = await openFileStorage({
    ...(o.cacheDir !== undefined ? { cacheDir: o.cacheDir } : {}),
    ioMode: o.ioMode,
    seed: o.seed,
    slots: slotCounts(o.concurrency),
  });
  const { file: storage, payload } = files;
  try {
    const recorder = new Recorder();
    const st = recorder.traffic.storage;
    const counts: ReplayCounts = {
      rows: 0,
      writes: 0,
      reads: 0,
      deletes: 0,
      writeBytes: 0,
      readBytes: 0,
      skippedOtherTiers: 0,
      missingKeys: 0,
    };
    const written = new Set<string>();
    const locks = new KeyedMutex();
    const rows = readTrace(o.tracePath)[Symbol.asyncIterator]();
    let firstTs: number | undefined;
    const watch = await DiskWatch.forPath(storage.dir).catch(() => undefined);
    const before = await watch?.snapshot().catch(() => undefined);
    const start = clock.now();

    const apply = async (row: TraceRow): Promise<void> => {
      if (row.op === 'Write') {
        const t = await storage.write(row.key, payload.source(row.key, row.size));
        written.add(row.key);
        recorder.recordIo('storage', 'write', t);
        counts.writes++;
        counts.writeBytes += row.size;
        st.writeOps++;
        st.writeBytes += row.size;
      } else if (!written.has(row.key)) {
        counts.missingKeys++;
      } else if (row.op === 'Read') {
        const r = await storage.read(row.key);
        recorder.recordIo('storage', 'read', r.timing);
        counts.reads++;
        counts.readBytes += r.bytes;
        st.readOps++;
        st.readBytes += r.bytes;
      } else {
        await storage.delete(row.key);
        written.delete(row.key);
        counts.deletes++;
      }
    };
    // Rows are pulled in trace order and each takes its key's lock at once, so operations on one key
    // keep their order while different keys overlap.
    const worker = async (): Promise<void> => {
      for (let it = await rows.next(); it.done !== true; it = await rows.next()) {
        const row = it.value;
        counts.rows++;
        if (!o.allTiers && row.tier !== 'storage') {
          counts.skippedOtherTiers++;
          continue;
        }
        const lock = locks.lock(row.key);
        firstTs ??= row.timestamp;
        if (o.paced) {
          const wait = start + (row.timestamp - firstTs) * 1000 - clock.now();
          if (wait > 0) await sleep(wait);
        }
        await lock;
        try {
          await apply(row);
        } finally {
          locks.unlock(row.key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency) }, worker));
    const elapsedSec = (clock.now() - start) / 1000;
    const after = before === undefined ? undefined : await watch?.snapshot().catch(() => undefined);
    return {
      counts,
      recorded: recorder.snapshot(),
      elapsedSec,
      storage: files.info,
      ...(watch !== undefined && before !== undefined && after !== undefined
        ? { device: { name: watch.device.name, delta: diskDelta(before, after) } }
        : {}),
      machine: await captureMachine(storage),
    };
  } finally {
    await tearDown({ payload, tiers: storage });
  }
}
