// I/O buffers in transparent huge pages. The size of an O_DIRECT request the device sees is capped by
// the queue's segment limit (max_segments, 254 on virtio-blk), and a segment is one physically
// contiguous run of memory: a 4 MiB read into scattered 4 KiB pages reaches the device as ~1 MiB
// requests, the same read into 2 MiB huge pages as one 4 MiB request. How scattered freshly allocated
// pages are depends on the machine's uptime, so without huge pages the same run on the same disk
// drifted by a third (bench:discrimination, issue 11). Node cannot madvise, so a small native helper
// (native/huge-pages.c, built by `npm run build` when a C compiler is there) does it.
import { readFileSync } from 'node:fs';
import { loadNativeHelper } from '../util/native-helper.js';
import { MiB } from '../util/units.js';

/** The huge page size buffers are aligned to (x86-64 and arm64 with 4 KiB base pages). */
export const HUGE_PAGE_BYTES = 2 * MiB;

const THP_ENABLED = '/sys/kernel/mm/transparent_hugepage/enabled';

interface Helper {
  /** Bytes of whole pages advised MADV_HUGEPAGE, or -errno. */
  adviseHugePages(view: Uint8Array): number;
  offsetToBoundary(view: Uint8Array, align: number): number;
}

/** The system's transparent-huge-page mode (the bracketed word of THP_ENABLED), or undefined without THP. */
export function thpMode(path = THP_ENABLED): 'always' | 'madvise' | 'never' | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const mode = /\[(\w+)\]/.exec(text)?.[1];
  return mode === 'always' || mode === 'madvise' || mode === 'never' ? mode : undefined;
}

/** How a run's I/O buffers are backed, and the means to back a fresh one. */
export interface PageBacking {
  /** True when fresh buffers get huge pages (advised, or the system gives them to everyone). */
  readonly huge: boolean;
  /** For results and console: e.g. "2 MiB transparent huge pages (advised: enabled = madvise)". */
  readonly description: string;
  /**
   * Call on a fresh, untouched buffer: asks for huge pages and returns the offset of its first
   * HUGE_PAGE_BYTES boundary (where a slab should start), or undefined when it got none.
   */
  prepare(buffer: SharedArrayBuffer): number | undefined;
}

const ORDINARY = (why: string): PageBacking => ({
  huge: false,
  description: `4 KiB pages (${why})`,
  prepare: () => undefined,
});

/** What this machine and build allow (`modePath` is for tests). */
export function pageBacking(modePath?: string): PageBacking {
  if (process.platform !== 'linux') return ORDINARY('not Linux');
  const mode = thpMode(modePath);
  if (mode === undefined) return ORDINARY('no transparent huge pages on this kernel');
  if (mode === 'never') return ORDINARY('transparent huge pages disabled: enabled = never');
  const helper = loadNativeHelper('huge_pages', 'huge-page') as Helper | string;
  if (typeof helper === 'string') return ORDINARY(helper);
  return {
    huge: true,
    description: `2 MiB transparent huge pages (${mode === 'always' ? 'system-wide: enabled = always' : 'advised: enabled = madvise'})`,
    prepare(buffer) {
      const view = new Uint8Array(buffer);
      // MADV_HUGEPAGE only fails on a kernel without THP, ruled out above; 'always' needs no advice.
      if (mode === 'madvise' && helper.adviseHugePages(view) < 0) return undefined;
      return helper.offsetToBoundary(view, HUGE_PAGE_BYTES);
    },
  };
}
