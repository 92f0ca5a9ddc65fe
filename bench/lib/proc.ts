// CPU time from /proc: of a process (or its reaped children), of its threads, of the whole machine.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times. */
export const CLK_TCK = ((): number => {
  const n = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** Fields of a /proc/.../stat line after "(comm) ", 0-based: utime 11, stime 12, cutime 13, cstime 14. */
export function procStatFields(statPath: string): string[] | undefined {
  try {
    const text = readFileSync(statPath, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(/\s+/);
  } catch {
    return undefined;
  }
}

export interface CpuSeconds {
  readonly user: number;
  readonly system: number;
}

/** CPU of `pid` itself (all its threads), or with `children` that of its reaped children. */
export function processCpu(pid: number | 'self', children: boolean): CpuSeconds | undefined {
  const f = procStatFields(`/proc/${pid}/stat`);
  if (f === undefined) return undefined;
  const [u, s] = children ? [13, 14] : [11, 12];
  return { user: Number(f[u]) / CLK_TCK, system: Number(f[s]) / CLK_TCK };
}

/** Machine-wide CPU jiffies from the first line of /proc/stat. */
export interface MachineCpu {
  readonly busy: number;
  readonly iowait: number;
  readonly total: number;
}

export function machineCpu(): MachineCpu {
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = first.trim().split(/\s+/).slice(1).map(Number);
  const at = (i: number): number => v[i] ?? 0;
  // user nice system idle iowait irq softirq steal (guest is already inside user)
  const total = [0, 1, 2, 3, 4, 5, 6, 7].reduce((sum, i) => sum + at(i), 0);
  return { busy: total - at(3) - at(4), iowait: at(4), total };
}
