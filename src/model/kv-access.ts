// What a KV-cache operation is for, in the words of LLM inference. The workload decides it, the cache
// and the recorder count by it; it lives here, below all three, so none of them depends on another.

/** The inference phase an operation serves: prefill writes an entry, decode reads it. */
export type Phase = 'prefill' | 'decode' | 'both';

/** What kind of data a read is for; selects the reference's per-type hit counter. */
export type CacheType = 'system' | 'common' | 'multi_turn' | 'user';
