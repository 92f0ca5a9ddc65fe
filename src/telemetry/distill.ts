// The fio distiller: a traced capture → a fio job file that reproduces the workload without the
// benchmark. The rules (the reference's distiller as upstream rewrote it, with our fixes noted):
// - request sizes from the block layer only when every direction the application used was captured
//   there and the block read share is within 40 points of the application's; else the NFS mount's
//   rsize/wsize; else the sizes of the process's own read/write calls; else 4k;
// - bssplit shares per direction sum to exactly 100 (largest remainder, not the reference's
//   round-and-floor-at-1 that can exceed 100 and make fio refuse the file);
// - rwmixread from the application's own read and write counts;
// - iodepth by Little's law, summed device time ÷ window, clamped to [1, max] (not floored at 32);
// - capture warnings; no size= (the target is the user's: --filename/--size).
// A header says where every value came from. Text from inputs (the results' block filter, the input
// path, a traced command) reaches the header only as inert one-line comments: a newline in it would
// otherwise start a real fio section. Pure: the caller writes the file.
import { estimatedSum, totalCount } from './histogram.js';
import type { Bucket, TraceCapture } from '../metrics/trace-capture.js';
import { describeDeviceFilter } from './capture.js';
import { inert } from '../util/safe-text.js';

/** A fio section name: one line, no brackets (fio would end the name at the first ']'). */
function sectionName(name: string): string {
  return inert(name).replace(/[[\]]/g, '_');
}

/** Points by which the block read share may differ from the application's before sizes come from elsewhere. */
export const SIZE_SOURCE_AGREEMENT_POINTS = 40;
/** Points of disagreement between block and application read shares that earn a warning. */
export const SHARE_WARNING_POINTS = 15;
/** Relative gap between block issues and completions that earns a warning. */
export const ISSUE_COMPLETE_WARNING = 0.25;
export const DEFAULT_MAX_IODEPTH = 256;

/** One bssplit entry: a request size (KiB) and its share (integer %). */
export interface SizeShare {
  readonly kib: number;
  readonly pct: number;
}

/**
 * Shares of each non-empty bucket (size = its lower bound, the reference's choice; a power-of-two
 * request lands exactly there) as integers summing to exactly 100: floors, then the remaining points
 * to the largest remainders (ties to the smaller size). Sizes whose share rounds to 0 are left out.
 */
export function bssplitShares(buckets: readonly Bucket[]): SizeShare[] {
  const used = buckets.filter((b) => b.count > 0);
  const total = totalCount(used);
  if (total === 0) return [];
  const raw = used.map((b, i) => ({ i, kib: b.lo, exact: (b.count * 100) / total }));
  const floors = raw.map((r) => Math.floor(r.exact));
  let left = 100 - floors.reduce((a, b) => a + b, 0);
  const byRemainder = [...raw].sort((a, b) => b.exact - Math.floor(b.exact) - (a.exact - Math.floor(a.exact)) || a.i - b.i);
  for (const r of byRemainder) {
    if (left === 0) break;
    floors[r.i] = (floors[r.i] ?? 0) + 1;
    left--;
  }
  // Buckets below 1 KiB ([0]) hold requests of at least one sector: written as 512 bytes.
  return raw.map((r, i) => ({ kib: r.kib, pct: floors[i] ?? 0 })).filter((s) => s.pct > 0);
}

/** fio's size syntax: 512 (bytes) below 1 KiB, `<n>k`, or `<n>m` for whole MiB. */
export function fioSize(kib: number): string {
  if (kib < 1) return '512';
  return kib >= 1024 && kib % 1024 === 0 ? `${kib / 1024}m` : `${kib}k`;
}

export const bssplitText = (shares: readonly SizeShare[]): string =>
  shares.length === 0 ? '4k/100' : shares.map((s) => `${fioSize(s.kib)}/${s.pct}`).join(':');

/** Little's law: mean requests in flight = summed device time ÷ window, rounded, clamped to [1, max]. */
export function littleIodepth(deviceTimeUs: number, windowSec: number, max: number): { exact: number; iodepth: number } {
  const exact = windowSec > 0 ? deviceTimeUs / (windowSec * 1e6) : 0;
  return { exact, iodepth: Math.min(max, Math.max(1, Math.round(exact))) };
}

/** The application's own read and write counts, and what they are. */
export interface AppCounts {
  readonly reads: number;
  readonly writes: number;
  readonly source: string;
}

export interface DistillInput {
  readonly capture: TraceCapture;
  /** Counts the tool itself kept (its storage tier operations), used when no syscalls were traced. */
  readonly tool?: AppCounts;
  /** rsize/wsize (bytes) of the NFS mount under the traced files, when they are on NFS. */
  readonly nfs?: { readonly rsize: number; readonly wsize: number };
  /** Overrides the capture's window (seconds), e.g. for saved output. */
  readonly windowSec?: number;
  readonly maxIodepth?: number;
  readonly jobName: string;
  /** Lines for the top of the header: what was traced, by what, when. */
  readonly about: readonly string[];
}

/** The distiller's inputs besides the capture itself (the results keep them for distill-fio). */
export type DistillExtras = Pick<DistillInput, 'tool' | 'nfs'>;

export type SizeSource = 'block' | 'nfs' | 'vfs' | 'default';

export interface Distilled {
  readonly ini: string;
  readonly bssplit: string;
  readonly rwmixread: number;
  readonly iodepth: number;
  readonly sizeSource: SizeSource;
  readonly warnings: readonly string[];
}

const samples = (c: TraceCapture, name: string): number => totalCount(c.histograms[name] ?? []);
const share = (r: number, w: number): number | null => (r + w > 0 ? (r * 100) / (r + w) : null);

/** The block layer's request counts: exact issue counters when traced, else the size histograms' samples. */
function blockCounts(c: TraceCapture): { reads: number; writes: number } {
  return {
    reads: c.scalars.issued_read ?? samples(c, 'bssplit_read_kb'),
    writes: c.scalars.issued_write ?? samples(c, 'bssplit_write_kb'),
  };
}

/** The application's counts: its traced read/write calls, else the tool's own counts, else none. */
function appCounts(i: DistillInput): AppCounts | undefined {
  const reads = samples(i.capture, 'vfs_read_us');
  const writes = samples(i.capture, 'vfs_write_us');
  const block = blockCounts(i.capture);
  // Calls far fewer than the block requests are not the process's I/O (libaio and io_uring submit
  // without read/write calls; what is left is configuration and logging).
  if (reads + writes > 0 && (reads + writes) * 10 >= block.reads + block.writes)
    return { reads, writes, source: `the process's read/write system calls (vfs_read_us ${reads}, vfs_write_us ${writes})` };
  if (i.tool !== undefined && i.tool.reads + i.tool.writes > 0) return i.tool;
  return undefined;
}

interface SizeChoice {
  readonly source: SizeSource;
  readonly read: string;
  readonly write: string;
  readonly why: string;
}

function chooseSizes(i: DistillInput, app: AppCounts | undefined, block: { reads: number; writes: number }): SizeChoice {
  const c = i.capture;
  const blockShare = share(block.reads, block.writes);
  const appShare = app === undefined ? null : share(app.reads, app.writes);
  // Every direction the application used must be in the block capture (both when its counts are unknown).
  const needRead = app === undefined || app.reads > 0;
  const needWrite = app === undefined || app.writes > 0;
  const captured = (!needRead || block.reads > 0) && (!needWrite || block.writes > 0) && block.reads + block.writes > 0;
  const agrees = blockShare !== null && (appShare === null || Math.abs(blockShare - appShare) <= SIZE_SOURCE_AGREEMENT_POINTS);
  if (captured && agrees) {
    return {
      source: 'block',
      read: bssplitText(bssplitShares(c.histograms.bssplit_read_kb ?? [])),
      write: bssplitText(bssplitShares(c.histograms.bssplit_write_kb ?? [])),
      why: `the block layer (bssplit_read_kb ${block.reads} requests, bssplit_write_kb ${block.writes})`,
    };
  }
  const notBlock = !captured
    ? 'the block layer did not capture every direction the application used'
    : `the block read share ${fmt(blockShare)} % is more than ${SIZE_SOURCE_AGREEMENT_POINTS} points from the application's ${fmt(appShare)} %`;
  if (i.nfs !== undefined) {
    return {
      source: 'nfs',
      read: `${fioSize(i.nfs.rsize / 1024)}/100`,
      write: `${fioSize(i.nfs.wsize / 1024)}/100`,
      why: `the NFS mount's rsize ${i.nfs.rsize} / wsize ${i.nfs.wsize} bytes (${notBlock})`,
    };
  }
  const vr = c.histograms.vfs_read_kb ?? [];
  const vw = c.histograms.vfs_write_kb ?? [];
  if (totalCount(vr) + totalCount(vw) > 0) {
    return {
      source: 'vfs',
      read: bssplitText(bssplitShares(vr)),
      write: bssplitText(bssplitShares(vw)),
      why: `the sizes of the process's own read/write calls (${notBlock})`,
    };
  }
  return { source: 'default', read: '4k/100', write: '4k/100', why: `nothing: 4k assumed (${notBlock}, and no call sizes were traced)` };
}

const fmt = (v: number | null, digits = 1): string => (v === null ? 'n/a' : v.toFixed(digits));

function captureWarnings(c: TraceCapture, app: AppCounts | undefined, block: { reads: number; writes: number }): string[] {
  const w: string[] = [];
  if (c.truncated) w.push("bpftrace's output was cut off: the last histogram may be incomplete");
  if (block.reads + block.writes === 0)
    w.push(
      `the block layer saw no requests on ${describeDeviceFilter(c.filters.device)}: the I/O stayed in the page cache, went to another device, or the window was too short`,
    );
  const blockShare = share(block.reads, block.writes);
  const appShare = app === undefined ? null : share(app.reads, app.writes);
  if (blockShare !== null && appShare !== null && Math.abs(blockShare - appShare) > SHARE_WARNING_POINTS)
    w.push(
      `the block layer's read share (${fmt(blockShare)} %) differs from the application's (${fmt(appShare)} %) by more than ${SHARE_WARNING_POINTS} points: other processes share the device, or the page cache absorbed I/O`,
    );
  const issued = block.reads + block.writes;
  const completed = c.scalars.completed_read ?? samples(c, 'd2c_read_us');
  const completedAll = completed + (c.scalars.completed_write ?? samples(c, 'd2c_write_us'));
  if (Math.max(issued, completedAll) > 0 && Math.abs(issued - completedAll) > ISSUE_COMPLETE_WARNING * Math.max(issued, completedAll))
    w.push(
      `block issues (${issued}) and completions (${completedAll}) are more than ${ISSUE_COMPLETE_WARNING * 100} % apart: events were lost, or the window cut through long requests`,
    );
  return w;
}

/** Summed device time (µs): the exact traced sums, else estimated from the D2C buckets' midpoints. */
function deviceTimeUs(c: TraceCapture): { us: number; exact: boolean } {
  const r = c.scalars.d2c_sum_us_read;
  const w = c.scalars.d2c_sum_us_write;
  if (r !== undefined || w !== undefined) return { us: (r ?? 0) + (w ?? 0), exact: true };
  return { us: estimatedSum(c.histograms.d2c_read_us ?? []) + estimatedSum(c.histograms.d2c_write_us ?? []), exact: false };
}

export function distillFio(i: DistillInput): Distilled {
  const c = i.capture;
  const max = i.maxIodepth ?? DEFAULT_MAX_IODEPTH;
  const block = blockCounts(c);
  const app = appCounts(i);
  const warnings = captureWarnings(c, app, block);
  const sizes = chooseSizes(i, app, block);
  if (sizes.source === 'default') warnings.push('no request sizes were captured: bssplit is a 4k placeholder');

  const counts = app ?? { ...block, source: `the block layer's requests (no application counts were traced)` };
  const mix = share(counts.reads, counts.writes);
  const rwmixread = mix === null ? 50 : Math.round(mix);

  const window = i.windowSec ?? c.windowSec;
  const time = deviceTimeUs(c);
  let iodepth: number;
  let iodepthWhy: string;
  if (window === null || window <= 0) {
    iodepth = 1;
    iodepthWhy = 'no window is known (give --window-s): 1';
    warnings.push('no capture window: iodepth cannot be derived by Little’s law and is set to 1 (pass --window-s)');
  } else {
    const l = littleIodepth(time.us, window, max);
    iodepth = l.iodepth;
    iodepthWhy = `Little's law: ${time.exact ? '' : 'estimated '}device time ${(time.us / 1e6).toFixed(3)} s ÷ window ${window.toFixed(3)} s = ${l.exact.toFixed(2)} → ${iodepth} (clamped to [1, ${max}])`;
  }
  if (mix === null) warnings.push('no read or write was counted: rwmixread is a 50 placeholder');

  const bssplit = `${sizes.read},${sizes.write}`;
  const pid = c.filters.pid;
  const header = [
    ...i.about,
    `block filter: ${describeDeviceFilter(c.filters.device)}; syscall filter: ${pid === null ? 'unknown' : `process ${pid}`}`,
    `window: ${window === null ? 'unknown' : `${window.toFixed(3)} s`}; block requests: ${block.reads} reads, ${block.writes} writes`,
    `bssplit (reads,writes): from ${sizes.why}`,
    `rwmixread: from ${counts.source} → ${counts.reads} reads, ${counts.writes} writes`,
    `iodepth: ${iodepthWhy}`,
    'no size=: name the target on the command line, e.g. fio FILE --filename=/dev/nvme0n1 or --filename=/mnt/x/f --size=10G',
    ...warnings.map((w) => `WARNING: ${w}`),
  ];
  const ini = [
    ...header.map((l) => `# ${inert(l)}`),
    '[global]',
    'ioengine=libaio',
    'direct=1',
    'rw=randrw',
    `rwmixread=${rwmixread}`,
    `bssplit=${bssplit}`,
    `iodepth=${iodepth}`,
    'iodepth_batch_complete_min=1',
    'time_based=1',
    'runtime=300',
    'norandommap=1',
    'randrepeat=0',
    'refill_buffers=1',
    'numjobs=1',
    'group_reporting=1',
    'percentile_list=50:95:99:99.9:99.99',
    '',
    `[${sectionName(i.jobName)}]`,
    '',
  ].join('\n');
  // Warnings quote the block filter (text of a results file) and are printed: one inert line each.
  return { ini, bssplit, rwmixread, iodepth, sizeSource: sizes.source, warnings: warnings.map(inert) };
}
