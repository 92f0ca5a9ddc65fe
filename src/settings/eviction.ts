// The reference's `eviction.*` settings (docs/reference-compat.md#rc-10), with its defaults. Declared
// here, below the cache that applies them, so the config table (config-keys.ts) can use the defaults
// without importing the cache.

export interface EvictionConfig {
  readonly maxRecursionDepth: number;
  readonly targetUsageRatio: number;
  readonly largeEntryLimitRatio: number;
  readonly maxEvictionsHardCap: number;
  readonly maxEvictionsMin: number;
}

export const DEFAULT_EVICTION: EvictionConfig = {
  maxRecursionDepth: 10,
  targetUsageRatio: 0.8,
  largeEntryLimitRatio: 0.95,
  maxEvictionsHardCap: 5000,
  maxEvictionsMin: 1000,
};
