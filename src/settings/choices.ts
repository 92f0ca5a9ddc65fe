// The closed sets of values a flag or config key may take, each declared once with its type.
export const GENERATION_MODES = ['none', 'fast', 'realistic'] as const;
export const PERFORMANCE_PROFILES = ['latency', 'throughput'] as const;
export const AUTOSCALER_MODES = ['qos', 'capacity'] as const;
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export const IO_MODES = ['direct', 'buffered'] as const;
export const TOKENIZERS = ['cl100k_base', 'chars'] as const;
export const RETRIEVAL_DISTRIBUTIONS = ['zipfian', 'uniform'] as const;
export const USER_TYPES = ['chatbot', 'coding', 'document'] as const;
/** QoS classes, highest priority first. */
export const QOS_LEVELS = ['interactive', 'responsive', 'batch'] as const;

export type GenerationMode = (typeof GENERATION_MODES)[number];
export type PerformanceProfile = (typeof PERFORMANCE_PROFILES)[number];
export type AutoscalerMode = (typeof AUTOSCALER_MODES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
/** direct = O_DIRECT with aligned buffers (reads never come from the page cache); buffered = the reference's behaviour. */
export type IoMode = (typeof IO_MODES)[number];
export type Tokenizer = (typeof TOKENIZERS)[number];
export type RetrievalDistribution = (typeof RETRIEVAL_DISTRIBUTIONS)[number];
export type UserType = (typeof USER_TYPES)[number];
export type QosLevel = (typeof QOS_LEVELS)[number];
