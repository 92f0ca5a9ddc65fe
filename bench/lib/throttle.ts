// Kernel read throttling of child processes: a pair of cgroups (one unlimited, one with a read
// bandwidth / IOPS cap on one block device) that children are launched inside, on cgroup v2 (`io.max`)
// or cgroup v1 (`blkio.throttle.read_*_device`), whichever this machine has mounted.
//
// Both groups are made the same way and children enter either one the same way, so the only
// difference between a "fast" and a "slow" run is the limit itself.
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { messageOf } from '../../src/util/errors.js';

export type CgroupVersion = 'v2' | 'v1';

/** Where read throttling is available: the hierarchy's mount point and its version. */
export interface ThrottleSupport {
  readonly version: CgroupVersion;
  readonly mount: string;
}

/** A read limit on one block device; 0 leaves that dimension unlimited. */
export interface ReadLimit {
  readonly major: number;
  readonly minor: number;
  readonly bytesPerSec: number;
  readonly iops: number;
}

/** Mount points of cgroup2 and of the v1 hierarchy carrying blkio, from mountinfo text. */
export function cgroupMounts(mountinfo: string): { v2: string | undefined; v1Blkio: string | undefined } {
  let v2: string | undefined;
  let v1Blkio: string | undefined;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    const mount = left?.split(' ')[4]?.replace(/\\040/g, ' ');
    const [fsType, , superOptions] = right?.split(' ') ?? [];
    if (mount === undefined) continue;
    if (fsType === 'cgroup2') v2 ??= mount;
    if (fsType === 'cgroup' && (superOptions ?? '').split(',').includes('blkio')) v1Blkio ??= mount;
  }
  return { v2, v1Blkio };
}

/**
 * cgroup v2 when its root offers the `io` controller, else cgroup v1 with blkio; when neither can
 * throttle reads here, the reason (a message naming what was looked for and what was found).
 */
export function detectThrottle(mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): ThrottleSupport | string {
  const { v2, v1Blkio } = cgroupMounts(mountinfo);
  if (v2 !== undefined) {
    let controllers = '';
    try {
      controllers = readFileSync(join(v2, 'cgroup.controllers'), 'utf8');
    } catch {
      // A v2 mount without a readable controller list cannot be configured; try v1.
    }
    if (controllers.split(/\s+/).includes('io')) return { version: 'v2', mount: v2 };
  }
  if (v1Blkio !== undefined) return { version: 'v1', mount: v1Blkio };
  return (
    'no read throttling available: needs cgroup v2 with the io controller (io.max) or a cgroup v1 blkio hierarchy ' +
    `(blkio.throttle.read_bps_device); found cgroup2 ${v2 === undefined ? 'not mounted' : `at ${v2} without io`}, ` +
    'no v1 blkio mount'
  );
}

/** Bytes a cgroup's processes moved to and from one device. */
export interface GroupBytes {
  readonly read: number;
  readonly written: number;
}

/**
 * Bytes read from and written to device MAJ:MIN by the processes of one cgroup, from its statistics
 * file: v2 `io.stat` lines `MAJ:MIN rbytes=N wbytes=N …`, v1 `blkio.throttle.io_service_bytes` lines
 * `MAJ:MIN Read N` / `MAJ:MIN Write N`. Zeros when the device has no line yet.
 */
export function cgroupIoBytes(version: CgroupVersion, text: string, major: number, minor: number): GroupBytes {
  const dev = `${major}:${minor}`;
  let read = 0;
  let written = 0;
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] !== dev) continue;
    if (version === 'v2') {
      const value = (key: string): number => Number(f.find((x) => x.startsWith(`${key}=`))?.slice(key.length + 1) ?? 0);
      read = value('rbytes');
      written = value('wbytes');
    } else if (f[1] === 'Read') read = Number(f[2]);
    else if (f[1] === 'Write') written = Number(f[2]);
  }
  return { read, written };
}

/** The text written to set (or, with zeros, clear) `limit` in one cgroup, and the file it goes to. */
export function limitWrites(version: CgroupVersion, limit: ReadLimit): Array<{ file: string; text: string }> {
  const dev = `${limit.major}:${limit.minor}`;
  if (version === 'v2') {
    const bps = limit.bytesPerSec > 0 ? String(limit.bytesPerSec) : 'max';
    const iops = limit.iops > 0 ? String(limit.iops) : 'max';
    return [{ file: 'io.max', text: `${dev} rbps=${bps} riops=${iops}` }];
  }
  // v1: a value of 0 removes the rule for that device.
  return [
    { file: 'blkio.throttle.read_bps_device', text: `${dev} ${limit.bytesPerSec}` },
    { file: 'blkio.throttle.read_iops_device', text: `${dev} ${limit.iops}` },
  ];
}

/**
 * Two cgroups under `<mount>/<name>/`: `fast` (no limit) and `slow` (the read limit). `remove()`
 * deletes both and their parent, and undoes the one change made outside them (v2: enabling the io
 * controller for the root's children, when it was not enabled before).
 */
export class ReadThrottle {
  private enabledRootIo = false;
  private readonly made: string[] = [];

  private constructor(
    readonly support: ThrottleSupport,
    readonly limit: ReadLimit,
    readonly parent: string,
  ) {}

  static async create(support: ThrottleSupport, limit: ReadLimit, name: string): Promise<ReadThrottle> {
    const t = new ReadThrottle(support, limit, join(support.mount, name));
    try {
      await t.setUp();
    } catch (e) {
      await t.remove();
      throw e;
    }
    return t;
  }

  private async setUp(): Promise<void> {
    const { version, mount } = this.support;
    if (version === 'v2') {
      // Children of a v2 cgroup get io.max only when every ancestor delegates the io controller.
      const rootControl = join(mount, 'cgroup.subtree_control');
      if (!(await readFile(rootControl, 'utf8')).split(/\s+/).includes('io')) {
        await writeFile(rootControl, '+io');
        this.enabledRootIo = true;
      }
    }
    await mkdir(this.parent);
    this.made.push(this.parent);
    if (version === 'v2') await writeFile(join(this.parent, 'cgroup.subtree_control'), '+io');
    for (const group of ['fast', 'slow'] as const) {
      await mkdir(this.dir(group));
      this.made.push(this.dir(group));
    }
    for (const w of limitWrites(version, this.limit)) await writeFile(join(this.dir('slow'), w.file), w.text);
  }

  dir(group: 'fast' | 'slow'): string {
    return join(this.parent, group);
  }

  /** The limit files of `group` as the kernel reports them (proof the limit is in place, or absent). */
  async describe(group: 'fast' | 'slow'): Promise<string> {
    const files = limitWrites(this.support.version, this.limit).map((w) => w.file);
    const parts = await Promise.all(
      files.map(async (f) => `${f}: ${(await readFile(join(this.dir(group), f), 'utf8')).trim().replace(/\n/g, '; ') || '(none)'}`),
    );
    return parts.join(', ');
  }

  /**
   * Bytes the processes of `group` have moved to and from the throttled device so far: per-cgroup, so
   * unlike /proc/diskstats it leaves out other processes' I/O to the same disk.
   */
  async ioBytes(group: 'fast' | 'slow'): Promise<GroupBytes> {
    const file = this.support.version === 'v2' ? 'io.stat' : 'blkio.throttle.io_service_bytes';
    return cgroupIoBytes(this.support.version, await readFile(join(this.dir(group), file), 'utf8'), this.limit.major, this.limit.minor);
  }

  /**
   * A command that runs `file args` inside `group`: a shell writes its own pid to cgroup.procs, then
   * execs the program in place, so the program (and everything it forks) is in the group from its first
   * instruction and keeps the pid the caller sees.
   */
  wrap(group: 'fast' | 'slow', file: string, args: readonly string[]): { file: string; args: string[] } {
    return { file: 'sh', args: ['-c', 'echo $$ > "$0" && exec "$@"', join(this.dir(group), 'cgroup.procs'), file, ...args] };
  }

  /** Removes the groups (retrying while exited children are still being reaped) and undoes the root change. */
  async remove(): Promise<string[]> {
    const problems: string[] = [];
    for (const dir of [...this.made].reverse()) {
      let lastError: unknown;
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          await rmdir(dir);
          lastError = undefined;
          break;
        } catch (e) {
          lastError = e;
          // EBUSY while a just-exited process is still listed in the group: wait for the kernel.
          await sleep(100);
        }
      }
      if (lastError !== undefined) problems.push(`could not remove cgroup ${dir}: ${messageOf(lastError)}`);
    }
    this.made.length = 0;
    if (this.enabledRootIo) {
      try {
        await writeFile(join(this.support.mount, 'cgroup.subtree_control'), '-io');
      } catch (e) {
        problems.push(`could not disable the io controller again at ${this.support.mount}: ${messageOf(e)}`);
      }
      this.enabledRootIo = false;
    }
    return problems;
  }
}

/** Removes a bench's throttle, saying on the console what was removed or what could not be (`script` names the bench). */
export async function removeThrottleLoudly(throttle: ReadThrottle, script: string): Promise<void> {
  const problems = await throttle.remove();
  for (const p of problems) console.error(`${script}: ${p}`);
  if (problems.length === 0) console.log(`removed cgroup ${throttle.parent}`);
}
