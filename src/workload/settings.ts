// Typed settings of the synthetic workload with the reference's defaults (spec §4.2–§4.7, §9.2).
// The workload layer never reads files or flags: the CLI builds these values (from config.yaml
// sections of the same names) and passes them in, so tests can drive every knob directly.

/** An inclusive integer range [lo, hi] or a half-open float range [lo, hi) for seconds. */
export type Range = readonly [number, number];

export type UserType = 'chatbot' | 'coding' | 'document';
export const USER_TYPES: readonly UserType[] = ['chatbot', 'coding', 'document'];

/** `user_templates.<type>`: per-user draws are made once from these ranges. */
export interface UserTemplate {
  readonly contextRange: Range;
  readonly generationRange: Range;
  readonly thinkTimeRangeS: Range;
}

export type QosLevel = 'interactive' | 'responsive' | 'batch';
/** Highest priority first. */
export const QOS_LEVELS: readonly QosLevel[] = ['interactive', 'responsive', 'batch'];

/** `qos_profiles.<level>`: scheduling priority (higher first) and latency targets in ms. */
export interface QosProfile {
  readonly level: QosLevel;
  readonly priority: number;
  readonly targetP95Ms: number;
  readonly targetP99Ms: number;
  readonly targetP999Ms: number;
  readonly targetP9999Ms: number;
}

/** `qos_distribution`: u < interactiveProbability → interactive; u < responsiveThreshold → responsive. */
export interface QosDistribution {
  readonly interactiveProbability: number;
  readonly responsiveThreshold: number;
}

/** `conversation`. Unlike the reference, endConversationProbability is honoured (it hard-coded 0.2). */
export interface ConversationSettings {
  readonly maxConversations: number;
  readonly maxTurnsPerConv: number;
  readonly endConversationProbability: number;
}

/** `prefix_cache`. minPrefixLength / maxPrefixEntries are carried for parity; they have no effect. */
export interface PrefixCacheSettings {
  readonly systemPromptHitProbability: number;
  readonly minPrefixLength: number;
  readonly maxPrefixEntries: number;
}

export type RetrievalDistribution = 'zipfian' | 'uniform';

/** `rag`. Large model = hidden ≥ 8192 or layers ≥ 64 (then shorter documents, to bound entry size). */
export interface RagSettings {
  readonly chunkSizeTokens: number;
  readonly topKChunks: number;
  readonly maxChunkBytes: number;
  readonly requestProbability: number;
  readonly retrievalDistribution: RetrievalDistribution;
  /** 0 = unlimited; otherwise ingesting beyond the limit evicts the oldest document. */
  readonly maxDocuments: number;
  readonly largeModelDocTokens: Range;
  readonly smallModelDocTokens: Range;
  /** Generation length of a RAG request, randint(lo, hi) (reference: 50–200, hard-coded). */
  readonly ragGenerationTokens: Range;
}

/** `decode`: one full-entry re-read per batchSize generated tokens (reference model). */
export interface DecodeSettings {
  readonly batchSize: number;
}

export interface WorkloadSettings {
  readonly userTemplates: Readonly<Record<UserType, UserTemplate>>;
  readonly qosProfiles: Readonly<Record<QosLevel, QosProfile>>;
  readonly qosDistribution: QosDistribution;
  readonly conversation: ConversationSettings;
  readonly prefixCache: PrefixCacheSettings;
  readonly rag: RagSettings;
  readonly decode: DecodeSettings;
}

export const DEFAULT_USER_TEMPLATES: Readonly<Record<UserType, UserTemplate>> = {
  chatbot: { contextRange: [512, 4096], generationRange: [50, 200], thinkTimeRangeS: [0.1, 0.5] },
  coding: { contextRange: [4096, 25000], generationRange: [100, 500], thinkTimeRangeS: [0.2, 1.0] },
  document: { contextRange: [4096, 16384], generationRange: [200, 800], thinkTimeRangeS: [0.3, 1.5] },
};

export const DEFAULT_QOS_PROFILES: Readonly<Record<QosLevel, QosProfile>> = {
  interactive: { level: 'interactive', priority: 3, targetP95Ms: 50, targetP99Ms: 100, targetP999Ms: 150, targetP9999Ms: 200 },
  responsive: { level: 'responsive', priority: 2, targetP95Ms: 100, targetP99Ms: 200, targetP999Ms: 350, targetP9999Ms: 500 },
  batch: { level: 'batch', priority: 1, targetP95Ms: 1000, targetP99Ms: 5000, targetP999Ms: 7500, targetP9999Ms: 10000 },
};

export const DEFAULT_QOS_DISTRIBUTION: QosDistribution = { interactiveProbability: 0.15, responsiveThreshold: 0.5 };

export const DEFAULT_CONVERSATION: ConversationSettings = {
  maxConversations: 1000,
  maxTurnsPerConv: 50,
  endConversationProbability: 0.2,
};

export const DEFAULT_PREFIX_CACHE: PrefixCacheSettings = {
  systemPromptHitProbability: 0.2,
  minPrefixLength: 50,
  maxPrefixEntries: 1000,
};

export const DEFAULT_RAG: RagSettings = {
  chunkSizeTokens: 512,
  topKChunks: 5,
  maxChunkBytes: 256 * 1024 * 1024,
  requestProbability: 0.1,
  retrievalDistribution: 'zipfian',
  maxDocuments: 0,
  largeModelDocTokens: [1024, 4096],
  smallModelDocTokens: [4000, 12000],
  ragGenerationTokens: [50, 200],
};

export const DEFAULT_DECODE: DecodeSettings = { batchSize: 32 };

export const DEFAULT_WORKLOAD_SETTINGS: WorkloadSettings = {
  userTemplates: DEFAULT_USER_TEMPLATES,
  qosProfiles: DEFAULT_QOS_PROFILES,
  qosDistribution: DEFAULT_QOS_DISTRIBUTION,
  conversation: DEFAULT_CONVERSATION,
  prefixCache: DEFAULT_PREFIX_CACHE,
  rag: DEFAULT_RAG,
  decode: DEFAULT_DECODE,
};

/** Per-section partial overrides, as a config file supplies them. */
export interface WorkloadOverrides {
  readonly userTemplates?: Partial<Record<UserType, Partial<UserTemplate>>>;
  readonly qosProfiles?: Partial<Record<QosLevel, Partial<Omit<QosProfile, 'level'>>>>;
  readonly qosDistribution?: Partial<QosDistribution>;
  readonly conversation?: Partial<ConversationSettings>;
  readonly prefixCache?: Partial<PrefixCacheSettings>;
  readonly rag?: Partial<RagSettings>;
  readonly decode?: Partial<DecodeSettings>;
}

function mergeRecord<K extends string, V extends object>(base: Readonly<Record<K, V>>, keys: readonly K[], over: Partial<Record<K, Partial<V>>> | undefined): Readonly<Record<K, V>> {
  const out = {} as Record<K, V>;
  for (const k of keys) out[k] = { ...base[k], ...(over?.[k] ?? {}) };
  return out;
}

/** Defaults with every given field replaced (a missing field keeps the default). */
export function resolveWorkloadSettings(over: WorkloadOverrides = {}, base: WorkloadSettings = DEFAULT_WORKLOAD_SETTINGS): WorkloadSettings {
  return {
    userTemplates: mergeRecord(base.userTemplates, USER_TYPES, over.userTemplates),
    qosProfiles: mergeRecord<QosLevel, QosProfile>(base.qosProfiles, QOS_LEVELS, over.qosProfiles),
    qosDistribution: { ...base.qosDistribution, ...over.qosDistribution },
    conversation: { ...base.conversation, ...over.conversation },
    prefixCache: { ...base.prefixCache, ...over.prefixCache },
    rag: { ...base.rag, ...over.rag },
    decode: { ...base.decode, ...over.decode },
  };
}
