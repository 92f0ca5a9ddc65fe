// The MLPerf Storage v3.0 KV-cache options (Rules table KVCache-1) and the CLOSED defaults of the
// sequence, as the reference's `mlpstorage … kvcache run` uses them. Data only.

export const OPTION_IDS = [1, 2, 3] as const;
export type OptionId = (typeof OPTION_IDS)[number];

/** The `kv-cache` run values an option fixes; in OPEN each may be overridden, key by key. */
export interface OptionValues {
  readonly model: string;
  readonly numUsers: number;
  readonly cpuMemGb: number;
  readonly gpuMemGb: number;
  readonly maxConcurrentAllocs: number;
  readonly generationMode: string;
  readonly durationSec: number;
}

export interface MlperfOption {
  readonly id: OptionId;
  readonly name: string;
  readonly values: OptionValues;
}

const COMMON = { gpuMemGb: 0, generationMode: 'none', durationSec: 300 } as const;

export const MLPERF_OPTIONS: Readonly<Record<OptionId, MlperfOption>> = {
  1: {
    id: 1,
    name: 'Max Storage Stress',
    values: { ...COMMON, model: 'llama3.1-8b', numUsers: 200, cpuMemGb: 0, maxConcurrentAllocs: 16 },
  },
  // max-concurrent-allocs was 0 upstream until a 250–350 GB RAM blow-up; 16 now.
  2: {
    id: 2,
    name: 'Storage Throughput',
    values: { ...COMMON, model: 'llama3.1-8b', numUsers: 100, cpuMemGb: 4, maxConcurrentAllocs: 16 },
  },
  3: {
    id: 3,
    name: 'Large Model',
    values: { ...COMMON, model: 'llama3.1-70b-instruct', numUsers: 70, cpuMemGb: 0, maxConcurrentAllocs: 4 },
  },
};

/** The sequence's CLOSED values: what a submission must use. */
export const CLOSED_DEFAULTS = {
  seed: 42,
  trials: 3,
  startDelaySec: 90,
  endDelaySec: 90,
  interOptionDelaySec: 90,
} as const;

/** The `kv-cache` flag of each option value, for the commands and the messages. */
export const VALUE_FLAGS: Readonly<Record<keyof OptionValues, string>> = {
  model: 'model',
  numUsers: 'num-users',
  cpuMemGb: 'cpu-mem-gb',
  gpuMemGb: 'gpu-mem-gb',
  maxConcurrentAllocs: 'max-concurrent-allocs',
  generationMode: 'generation-mode',
  durationSec: 'duration',
};
