// The one validated, immutable value the engine receives: every flag of the reference (spec §9.1, same
// defaults), our additive flags, the resolved model and every config.yaml section (spec §9.2) with its
// defaults applied. Field names are the camelCase of the flag names, so flag ↔ field is mechanical.
import type { ModelConfig } from '../model/models.js';
import type { EvictionConfig } from '../cache/tiered-cache.js';
import type { ConversationSettings, PrefixCacheSettings, QosDistribution, RagSettings } from '../workload/settings.js';
import { DEFAULT_GPU_BANDWIDTH_GBS } from '../tiers/simulated-gpu.js';
import { fileStamp } from '../util/dates.js';

export const GENERATION_MODES = ['none', 'fast', 'realistic'] as const;
export const PERFORMANCE_PROFILES = ['latency', 'throughput'] as const;
export const AUTOSCALER_MODES = ['qos', 'capacity'] as const;
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export const IO_MODES = ['direct', 'buffered'] as const;
export const TOKENIZERS = ['cl100k_base', 'chars'] as const;
export const RETRIEVAL_DISTRIBUTIONS = ['zipfian', 'uniform'] as const;
export const USER_TYPES = ['chatbot', 'coding', 'document'] as const;
export const QOS_CLASSES = ['interactive', 'responsive', 'batch'] as const;

export type GenerationMode = (typeof GENERATION_MODES)[number];
export type PerformanceProfile = (typeof PERFORMANCE_PROFILES)[number];
export type AutoscalerMode = (typeof AUTOSCALER_MODES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
/** direct = O_DIRECT with aligned buffers (reads never come from the page cache); buffered = the reference's behaviour. */
export type IoMode = (typeof IO_MODES)[number];
export type Tokenizer = (typeof TOKENIZERS)[number];
export type RetrievalDistribution = (typeof RETRIEVAL_DISTRIBUTIONS)[number];
export type UserType = (typeof USER_TYPES)[number];
export type QosClass = (typeof QOS_CLASSES)[number];

/** An inclusive [low, high] range. */
export type Range = readonly [number, number];

export interface UserTemplate {
  readonly contextRange: Range;
  readonly generationRange: Range;
  readonly thinkTimeRange: Range;
}

export interface QosProfile {
  readonly priority: number;
  readonly targetP95Ms: number;
  readonly targetP99Ms: number;
  readonly targetP999Ms: number;
  readonly targetP9999Ms: number;
}

/** config.yaml sections (spec §9.2) with defaults applied; the YAML's snake_case keys in camelCase. */
export interface Settings {
  readonly userTemplates: Readonly<Record<UserType, UserTemplate>>;
  /** Seconds of simulated generation per token. */
  readonly generationTiming: Readonly<Record<GenerationMode, number>>;
  readonly qosProfiles: Readonly<Record<QosClass, QosProfile>>;
  readonly qosDistribution: QosDistribution;
  readonly eviction: EvictionConfig;
  readonly gpuBackend: { readonly memoryFraction: number; readonly maxEvictionAttempts: number; readonly freeMemoryThreshold: number };
  readonly prefixCache: PrefixCacheSettings;
  /** The workload layer's RAG settings; the RAG request's generation range is not configurable. */
  readonly rag: Omit<RagSettings, 'ragGenerationTokens'>;
  readonly conversation: ConversationSettings;
  readonly autoscaler: {
    readonly minUsers: number;
    readonly maxUsers: number;
    readonly scaleUpFactor: number;
    readonly scaleDownFactor: number;
    readonly consecutiveSamplesRequired: number;
  };
  readonly decode: { readonly batchSize: number };
  readonly sharegpt: { readonly maxContextTokens: number; readonly maxGenerationTokens: number; readonly charsPerTokenEstimate: number };
  readonly saturationDetection: {
    readonly readLatencyP95ThresholdMs: number;
    readonly writeLatencyP95ThresholdMs: number;
    readonly queueDepthThreshold: number;
    readonly historyWindowSize: number;
  };
  /** Limits the flag checks use (unlike the reference, which ignores this section). */
  readonly validationLimits: {
    readonly maxUsers: number;
    readonly maxDurationSeconds: number;
    readonly maxGpuMemoryGb: number;
    readonly maxCpuMemoryGb: number;
  };
}

/** Every command-line flag, by value. `model` is the model key as typed. */
export interface RunFlags {
  readonly logLevel: LogLevel;
  readonly model: string;
  readonly numUsers: number;
  readonly durationSec: number;
  readonly gpuMemGb: number;
  readonly numGpus: number;
  readonly tensorParallel: number;
  readonly cpuMemGb: number;
  /** Absolute path; undefined = a fresh temporary directory. */
  readonly cacheDir?: string;
  readonly generationMode: GenerationMode;
  readonly performanceProfile: PerformanceProfile;
  readonly disableMultiTurn: boolean;
  readonly disablePrefixCaching: boolean;
  readonly enableRag: boolean;
  readonly ragNumDocs: number;
  readonly enableAutoscaling: boolean;
  readonly autoscalerMode: AutoscalerMode;
  readonly targetSaturation: number;
  readonly useBurstTrace: boolean;
  readonly burstTracePath: string;
  readonly validationTrace?: string;
  readonly datasetPath?: string;
  readonly maxConversations: number;
  readonly output: string;
  readonly seed: number;
  readonly maxConcurrentAllocs: number;
  readonly requestRate: number;
  readonly maxRequests: number;
  readonly xlsxOutput?: string;
  readonly config?: string;
  readonly storageCapacityGb: number;
  readonly precondition: boolean;
  readonly preconditionSizeGb: number;
  readonly preconditionThreads: number;
  readonly traceSpeedup: number;
  readonly replayCycles: number;
  readonly prefillOnly: boolean;
  readonly decodeOnly: boolean;
  readonly ioTraceLog?: string;
  readonly enableLatencyTracing: boolean;
  readonly gpuBandwidthGbs: number;
  /** Seconds between autoscaler samples (additive flag; the reference hard-codes 10). */
  readonly autoscaleIntervalSec: number;
  /** How ShareGPT text becomes token counts (additive flag; the reference fell back to chars/4 without tiktoken). */
  readonly tokenizer: Tokenizer;
  // Additive flags (not in the reference).
  readonly ioMode: IoMode;
  readonly keepLatencySamples: boolean;
  readonly noProgress: boolean;
}

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

export interface RunConfig extends Omit<RunFlags, 'model'> {
  /** The resolved model (built-in table merged with the config file's model_configs). */
  readonly model: ModelConfig;
  /** The whole model table after the merge (for listing and for error messages). */
  readonly models: ReadonlyMap<string, ModelConfig>;
  /** False when --seed was not given and `seed` was drawn at startup. */
  readonly seedGiven: boolean;
  readonly settings: Settings;
  /** Plain JSON of the effective configuration ({args, model, config} in snake_case) for the results file. */
  readonly effective: JsonObject;
}

/** Flag defaults that do not depend on the start time or randomness (spec §9.1). */
export const FLAG_DEFAULTS = {
  logLevel: 'INFO',
  model: 'llama3.1-8b',
  numUsers: 100,
  durationSec: 60,
  gpuMemGb: 16,
  numGpus: 1,
  tensorParallel: 1,
  cpuMemGb: 32,
  generationMode: 'realistic',
  performanceProfile: 'latency',
  disableMultiTurn: false,
  disablePrefixCaching: false,
  enableRag: false,
  ragNumDocs: 10,
  enableAutoscaling: false,
  autoscalerMode: 'qos',
  targetSaturation: 0.8,
  useBurstTrace: false,
  burstTracePath: 'BurstGPT/data/BurstGPT_1.csv',
  maxConversations: 500,
  maxConcurrentAllocs: 0,
  requestRate: 0,
  maxRequests: 0,
  storageCapacityGb: 0,
  precondition: false,
  preconditionSizeGb: 0,
  preconditionThreads: 0,
  traceSpeedup: 1.0,
  replayCycles: 0,
  prefillOnly: false,
  decodeOnly: false,
  enableLatencyTracing: false,
  gpuBandwidthGbs: DEFAULT_GPU_BANDWIDTH_GBS,
  autoscaleIntervalSec: 10,
  tokenizer: 'cl100k_base',
  ioMode: 'direct',
  keepLatencySamples: false,
  noProgress: false,
} as const satisfies Omit<RunFlags, 'output' | 'seed' | 'cacheDir' | 'validationTrace' | 'datasetPath' | 'xlsxOutput' | 'config' | 'ioTraceLog'>;


/** `benchmark_results_<YYYYmmdd_HHMMSS>.json` in local time, as the reference names it. */
export function defaultOutputName(now: Date): string {
  return `benchmark_results_${fileStamp(now)}.json`;
}

/** A random non-negative 31-bit seed from a [0, 1) source. */
export function randomSeed(rng: () => number): number {
  return Math.floor(rng() * 2 ** 31) % 2 ** 31;
}
