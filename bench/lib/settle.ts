// Waiting for the kernel to finish the previous program's work before measuring the next: its
// writeback and ext4's conversion of unwritten extents (kworkers) go on after it exits, and slowed
// whichever program came next to a tenth on a RAM-backed device (round 1 of bench:fast-device and
// bench:ranks before they waited).
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { snapshot, windowBetween } from './disk-window.js';

/** The machine's busy share below which the kernel's leftover work of the previous program is done. */
const SETTLED_BUSY_PCT = 15;
const SETTLE_LIMIT_MS = 120_000;

/**
 * Syncs the file system holding `path`, then waits until block device `device` has had a second with no
 * writes and the machine is under `busyPct` % busy (default 15; at most `limitMs`, two minutes unless
 * given: a machine others load never gets that quiet). Returns the seconds waited. On a machine others
 * are using, a higher `busyPct` waits for the device alone.
 */
export async function settleDevice(device: string, path: string, busyPct = SETTLED_BUSY_PCT, limitMs = SETTLE_LIMIT_MS): Promise<number> {
  spawnSync('sync', ['-f', path]);
  const started = performance.now();
  for (;;) {
    const a = snapshot(device, undefined);
    await sleep(1000);
    const w = windowBetween(a, snapshot(device, undefined));
    if ((w.disk.writeBytes === 0 && w.machineBusyPct < busyPct) || performance.now() - started > limitMs) break;
  }
  return (performance.now() - started) / 1000;
}
