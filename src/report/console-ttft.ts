// The TIME TO FIRST TOKEN section of the console summary (issue 23): kvcache_bench.ttft_modelled. Its
// title and first line say the figures are modelled and on which GPU profile and MFU; measured
// figures are in the other sections, unchanged.
import type { KvcacheBench } from './results-schema.js';
import type { TtftClassJson } from './ttft-schema.js';

const gbps = (bytesPerSec: number | null): string => (bytesPerSec === null ? 'n/a' : `${(bytesPerSec / 1e9).toFixed(2)} GB/s`);
const ms3 = (s: TtftClassJson['ttft_offload_ms']): string => `${s.p50.toFixed(1)} / ${s.p95.toFixed(1)} / ${s.p99.toFixed(1)}`;
const kTokens = (t: number): string => (t % 1024 === 0 ? `${t / 1024}k` : String(t));

function classRow(name: string, c: TtftClassJson): string {
  const speedup = c.speedup === null ? 'n/a' : `${c.speedup.p5.toFixed(2)} / ${c.speedup.p50.toFixed(2)}`;
  const slower = c.load_slower_share === null ? 'n/a' : `${c.load_slower_requests} (${(c.load_slower_share * 100).toFixed(1)} %)`;
  return [
    `  ${name.padEnd(12)}`,
    String(c.requests).padStart(8),
    String(c.requests_with_hits).padStart(10),
    ms3(c.ttft_offload_ms).padStart(26),
    ms3(c.ttft_recompute_ms).padStart(26),
    speedup.padStart(13),
    slower.padStart(15),
  ].join('  ');
}

/** Lines of the section (title included); empty when the file has no block (--gpu-profile none, older versions). */
export function ttftLines(block: KvcacheBench['ttft_modelled']): string[] {
  if (block === undefined) return [];
  if ('not_modelled' in block) return ['', '### TIME TO FIRST TOKEN (MODELLED) ###', `  not modelled: ${block.not_modelled}`];
  const o = block.overall;
  const head = ['class', 'requests', 'with hits', 'offload p50/p95/p99 ms', 'recompute p50/p95/p99 ms', 'speedup p5/p50', 'offload lost'];
  const widths = [12, 8, 10, 26, 26, 13, 15];
  return [
    '',
    `### TIME TO FIRST TOKEN (MODELLED: ${block.gpu_name}, ${block.bf16_dense_tflops} TFLOP/s BF16 × MFU ${block.mfu} × TP ${block.tensor_parallel}) ###`,
    '  Modelled, not measured: measured queue wait + measured hit loads + modelled prefill compute (docs/ttft.md).',
    `  Break-even read bandwidth per GPU rank: ${block.break_even_read_bytes_per_sec
      .map((b) => `${gbps(b.bytes_per_sec)} (${kTokens(b.context_tokens)}-token prefix)`)
      .join(', ')}`,
    `  ${head.map((h, i) => (i === 0 ? h.padEnd(widths[i]) : h.padStart(widths[i]))).join('  ')}`,
    classRow('all', o),
    ...Object.entries(block.by_qos).map(([name, c]) => classRow(name, c)),
    o.requests_with_hits === 0
      ? '  No request was served from cache before its prefill: both TTFTs are the same.'
      : `  Storage delivered to the hits: ${gbps(o.delivered_read_bytes_per_sec)} (per request p50 ${
          o.delivered_read_mb_per_sec_per_request === null
            ? 'n/a'
            : `${(o.delivered_read_mb_per_sec_per_request.p50 / 1000).toFixed(2)} GB/s`
        }); break-even for these hits: ${gbps(o.break_even_read_bytes_per_sec)}`,
  ];
}
