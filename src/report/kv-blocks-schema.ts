// The results' `kvcache_bench.kv_blocks` block (block-granular runs; report/kv-blocks-json.ts builds it).
import * as z from 'zod';

const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
const share = (what: string): z.ZodNumber => z.number().min(0).max(1).describe(`${what} (0–1)`);
const perTier = (what: string) =>
  z
    .strictObject({
      gpu: share(`${what} served from the GPU tier`),
      cpu: share(`${what} served from the CPU tier`),
      storage: share(`${what} served from the storage tier`),
      total: share(`${what} served from any tier`),
    })
    .describe(`${what} served from each tier ÷ ${what} the requests' contexts asked for`);

export const KvBlocksSchema = z
  .strictObject({
    block_tokens: count('tokens per block (--kv-block-tokens; a Mooncake trace: 512 unless given)'),
    block_bytes: count("bytes of a full block for the run's model (bytes); the last block of a context holds the remainder"),
    keys: z
      .enum(['prefix_hash', 'trace_hash_ids'])
      .describe("where block keys come from: a hash of the prompt's segments up to the block, or the trace's hash ids"),
    requests: count('requests whose context was looked up'),
    tokens_asked: count("tokens of the requests' contexts"),
    blocks_asked: count("blocks of the requests' contexts"),
    token_hit_rate: perTier('tokens'),
    block_hit_rate: perTier('blocks'),
    ideal: z
      .strictObject({
        tracked: z
          .boolean()
          .describe('false once more distinct blocks were seen than are remembered (4,194,304): the ideal rates are then null'),
        token_hit_rate: share('tokens of blocks asked before ÷ tokens asked: the hit rate with unlimited capacity').nullable(),
        block_hit_rate: share('blocks asked before ÷ blocks asked').nullable(),
      })
      .describe("the reuse the workload implied; an achieved rate below it is the cache's capacity or eviction at work"),
    blocks_written: count('missing blocks this run wrote after the present prefix'),
    tokens_written: count('tokens of those blocks'),
    blocks_found_written: count('missing blocks another request had written meanwhile (not written twice)'),
    blocks_not_written: count('missing blocks that could not be written (no room, a failed write, the run ending)'),
    decode_block_reads: count('block reads of the decode phase (the chain once per decode batch)'),
    decode_block_misses: count('of those, blocks no longer cached'),
    block_reads_per_sec: z
      .number()
      .nonnegative()
      .describe('blocks read per second of the measured window (prefix hits and decode re-reads)'),
    block_writes_per_sec: z.number().nonnegative().describe('blocks written per second of the measured window'),
    sizes: z
      .strictObject({
        count: count('blocks moved (written or read)'),
        min_bytes: count('smallest (bytes)'),
        mean_bytes: z.number().nonnegative().describe('mean (bytes)'),
        max_bytes: count('largest (bytes)'),
        buckets: z
          .array(
            z.strictObject({
              upto_bytes: count('upper bound, inclusive (bytes)'),
              blocks: count('blocks of a size above the previous bound'),
            }),
          )
          .describe('power-of-two size classes holding at least one block'),
      })
      .describe('the size distribution of the blocks the tiers moved'),
  })
  .describe('Block-granular KV cache (--kv-block-tokens, --mooncake-trace): absent for whole-request runs and before schema 2.4.0');

export type KvBlocksJson = z.infer<typeof KvBlocksSchema>;
