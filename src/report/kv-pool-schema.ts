// The results' `kvcache_bench.kv_pool` block (issue 32; report/kv-pool-json.ts builds it): the pool a
// block-granular run's storage tier was (this rank's own, or one shared by every rank), how the ranks
// divided the trace, and for a shared pool the lookups through the storage, who published the blocks
// the hits read, publishes and races, and what the pool held at start.
import * as z from 'zod';

const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
const share = (what: string): z.ZodNumber => z.number().min(0).max(1).describe(`${what} (0–1)`);

const originHits = (who: string) =>
  z
    .strictObject({
      tokens: count(`prefix-hit tokens read from blocks ${who} published`),
      blocks: count(`prefix-hit blocks ${who} published`),
      token_hit_rate: share(`those tokens ÷ tokens the requests' contexts asked for (kv_blocks.tokens_asked)`),
    })
    .describe(`hits on blocks ${who} published`);

export const KvPoolSchema = z
  .strictObject({
    pool: z.enum(['private', 'shared']).describe('--kv-pool: each rank its own storage namespace, or one pool every rank reads and writes'),
    route: z
      .enum(['replicate', 'session', 'round-robin'])
      .describe('--route in effect: how the ranks divided a recorded trace (replicate: every rank replayed all of it)'),
    rank: count('this rank'),
    world_size: count('ranks of the run'),
    requests_passed: count("the source's requests this rank passed in trace order, its own and other ranks'"),
    requests_served: count('of them, the requests routed to this rank'),
    trace_ideal: z
      .strictObject({
        tracked: z
          .boolean()
          .describe(
            'false when a passed request named no blocks (only Mooncake traces do) or too many distinct blocks were seen: token_hit_rate is then null',
          ),
        tokens_asked: count('tokens of every passed request (all ranks’)'),
        token_hit_rate: share(
          'tokens of blocks asked before by any passed request ÷ tokens asked: one unlimited pool for the whole trace',
        ).nullable(),
      })
      .describe(
        "the whole trace's own reuse over the requests this rank passed (every rank's): what one shared pool of unlimited size could reach",
      ),
    shared: z
      .strictObject({
        location: z.string().describe("where the pool's blocks are: the namespace directory, or bucket and key prefix"),
        namespace: z.string().describe('kvpool-<16 hex>: the model, tokens per block and bytes per token the blocks were made for'),
        capacity_share_bytes: z
          .number()
          .nonnegative()
          .nullable()
          .describe(
            "this rank's share of the pool's capacity (--storage-capacity-gb ÷ ranks; bytes); it evicts only blocks it published, within it; null: unlimited",
          ),
        keep_pool: z.boolean().describe('--keep-pool: the blocks this rank published were left for a later run'),
        at_start: z
          .strictObject({
            blocks: count('published blocks the pool held when this rank opened it (earlier runs’)'),
            block_bytes: count('their bytes'),
            stale_temps: count('temporary files of writers killed mid-block (never read: a block is published whole or not at all)'),
            stale_temp_bytes: count('their bytes'),
            stale_temps_removed: count('of them removed (--remove-stale-entries)'),
          })
          .describe('the pool when this rank opened it'),
        lookups: z
          .strictObject({
            count: count('existence checks of blocks on the storage (stat, HEAD), in chain order until the first miss'),
            found: count('of them, blocks found'),
            per_sec: z.number().nonnegative().describe('lookups per second of the measured window'),
            latency_ms: z
              .strictObject({
                mean: z.number().nonnegative(),
                p50: z.number().nonnegative(),
                p95: z.number().nonnegative(),
                p99: z.number().nonnegative(),
                p999: z.number().nonnegative(),
                max: z.number().nonnegative(),
              })
              .describe('time of one lookup (ms)'),
            histogram: z.string().describe('the lookup times as an encoded HdrHistogram (µs), for merges'),
          })
          .describe('lookups through the storage: the metadata traffic a shared pool adds'),
        hits_by_origin: z
          .strictObject({
            own: originHits('this rank'),
            other_rank: originHits('another rank of this run'),
            earlier_run: originHits('a run before this one (a kept pool)'),
          })
          .describe(
            "prefix hits read from the pool, by who published the block (this rank's own GPU and CPU tiers are kv_blocks.token_hit_rate.gpu/.cpu)",
          ),
        published_blocks: count('blocks this rank published (placed or demoted into the pool)'),
        published_bytes: count('their bytes'),
        publish_races: count('blocks another writer published first: not rewritten'),
        discarded_bytes: count(
          'bytes of the temporary copies written for those races and discarded (they moved: in the storage write bytes)',
        ),
        vanished: count('blocks a lookup found that were gone when read (evicted by their publisher meanwhile): misses, not errors'),
        lost_own: count("this rank's own blocks a lookup no longer found (removed by someone else): dropped from its index"),
      })
      .nullable()
      .describe('the shared pool (--kv-pool shared); null for a private one'),
  })
  .describe(
    'Block-granular runs with a shared pool or ranks dividing a trace (--kv-pool, --route; docs/shared-pool.md): absent otherwise and before schema 2.7.0',
  );

export type KvPoolJson = z.infer<typeof KvPoolSchema>;
