// The kv-cache figures bench:discrimination compares across the fast and slow device, read from its results file.
import { mib } from '../format.js';

/** A kv-cache figure compared across conditions; `faster` says which direction a faster device moves it. */
export interface Figure {
  readonly label: string;
  readonly path: readonly string[];
  readonly faster: 'higher' | 'lower';
  readonly show: (v: number) => string;
}

const perSecMiB = (v: number): string => mib(v);
const plain = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(2));

export const FIGURES: readonly Figure[] = [
  {
    label: 'storage read MiB/s (kvcache_bench.storage_bytes)',
    path: ['kvcache_bench', 'storage_bytes', 'read_bytes_per_sec'],
    faster: 'higher',
    show: perSecMiB,
  },
  {
    label: 'device read MiB/s (kvcache_bench.device_io)',
    path: ['kvcache_bench', 'device_io', 'read_bytes_per_sec'],
    faster: 'higher',
    show: perSecMiB,
  },
  {
    label: 'summary.storage_throughput_tokens_per_sec',
    path: ['summary', 'storage_throughput_tokens_per_sec'],
    faster: 'higher',
    show: plain,
  },
  { label: 'summary.avg_throughput_tokens_per_sec', path: ['summary', 'avg_throughput_tokens_per_sec'], faster: 'higher', show: plain },
  { label: 'summary.requests_per_second', path: ['summary', 'requests_per_second'], faster: 'higher', show: plain },
  {
    label: 'storage read device p95 ms (cache_stats)',
    path: ['summary', 'cache_stats', 'storage_read_device_p95_ms'],
    faster: 'lower',
    show: plain,
  },
];
