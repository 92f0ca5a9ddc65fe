// The results' `kvcache_bench.kv_blocks` block (block-granular runs): the run's block figures as rates
// a reader can compare across runs — token and block hit rates per tier (tokens served from the tier ÷
// tokens the requests' contexts asked for), the ideal rates the workload itself implied, blocks moved
// per second and their sizes. Pure: a function of the RunResult.
import type { KvBlocksFacts } from '../metrics/result.js';
import { totalHitBlocks, totalHitTokens } from '../metrics/block-stats.js';
import type { TierName } from '../tiers/backend.js';
import type { KvBlocksJson } from './kv-blocks-schema.js';

const share = (part: number, whole: number): number => (whole > 0 ? part / whole : 0);

export function kvBlocksJson(k: KvBlocksFacts, elapsedSec: number): KvBlocksJson {
  const s = k.stats;
  const tokenRate = (t: TierName): number => share(s.hitTokens[t], s.tokensAsked);
  const blockRate = (t: TierName): number => share(s.hitBlocks[t], s.blocksAsked);
  const perSec = (n: number): number => (elapsedSec > 0 ? n / elapsedSec : 0);
  const lookupHits = totalHitBlocks(s);
  return {
    block_tokens: k.blockTokens,
    block_bytes: k.blockBytes,
    keys: k.keys,
    requests: s.requests,
    tokens_asked: s.tokensAsked,
    blocks_asked: s.blocksAsked,
    token_hit_rate: {
      gpu: tokenRate('gpu'),
      cpu: tokenRate('cpu'),
      storage: tokenRate('storage'),
      total: share(totalHitTokens(s), s.tokensAsked),
    },
    block_hit_rate: {
      gpu: blockRate('gpu'),
      cpu: blockRate('cpu'),
      storage: blockRate('storage'),
      total: share(lookupHits, s.blocksAsked),
    },
    ideal: {
      tracked: s.ideal.tracked,
      token_hit_rate: s.ideal.tracked ? share(s.ideal.hitTokens, s.tokensAsked) : null,
      block_hit_rate: s.ideal.tracked ? share(s.ideal.hitBlocks, s.blocksAsked) : null,
    },
    blocks_written: s.blocksWritten,
    tokens_written: s.tokensWritten,
    blocks_found_written: s.blocksFoundWritten,
    blocks_not_written: s.blocksNotWritten,
    decode_block_reads: s.decodeBlockReads,
    decode_block_misses: s.decodeBlockMisses,
    block_reads_per_sec: perSec(lookupHits + s.decodeBlockReads - s.decodeBlockMisses),
    block_writes_per_sec: perSec(s.blocksWritten),
    sizes: {
      count: s.sizes.count,
      min_bytes: s.sizes.minBytes,
      mean_bytes: share(s.sizes.totalBytes, s.sizes.count),
      max_bytes: s.sizes.maxBytes,
      buckets: s.sizes.buckets.map((b) => ({ upto_bytes: b.uptoBytes, blocks: b.blocks })),
    },
  };
}
