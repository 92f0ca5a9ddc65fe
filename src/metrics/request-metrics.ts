// Per-request measurements of a run: completions, tokens, summed I/O and generation time, and the
// latency distributions the reference reports (end-to-end, storage, generation, prefill, decode).
import { LatencyHistogram } from './latency.js';
import type { LatencySnapshot } from './latency.js';
import { QosCompliance } from './qos-compliance.js';
import type { QosTargets } from './qos-compliance.js';

export interface RequestSample {
  readonly qos: string;
  /** From the request's actual issue (enqueue) to its completion. */
  readonly e2eMs: number;
  /** Time waiting in the queue for a worker. */
  readonly queueMs: number;
  /** Sum of the backend-timed latencies of every cache operation of the request. */
  readonly storageMs: number;
  readonly generationMs: number;
  readonly prefillMs?: number;
  readonly decodeMs?: number;
  readonly generatedTokens: number;
  /** The request's context length (tokens): compared with a real trace's (--validation-trace). */
  readonly contextTokens: number;
  readonly multiTurnHits: number;
  readonly multiTurnMisses: number;
}

/** Raw per-request lists, kept only with --keep-latency-samples (seconds, as the reference). */
export interface RawSamples {
  end_to_end_latencies: number[];
  storage_latencies: number[];
  generation_latencies: number[];
}

/** Context lengths of completed requests: mean and nearest-rank percentiles (the trace reader's definition). */
export interface ContextTokenSummary {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

/**
 * Exact counts per context length. A token count is an integer bounded by the model's context, so
 * the map stays small (one entry per distinct length), a record is one map update, and percentiles
 * are exact, comparable with a trace's to the token.
 */
export class TokenCounts {
  private readonly counts = new Map<number, number>();
  private n = 0;
  private sum = 0;

  record(tokens: number): void {
    this.counts.set(tokens, (this.counts.get(tokens) ?? 0) + 1);
    this.n++;
    this.sum += tokens;
  }

  reset(): void {
    this.counts.clear();
    this.n = 0;
    this.sum = 0;
  }

  summary(): ContextTokenSummary {
    if (this.n === 0) return { count: 0, mean: 0, p50: 0, p95: 0, max: 0 };
    const values = [...this.counts.keys()].sort((a, b) => a - b);
    const at = (p: number): number => {
      const rank = Math.min(this.n, Math.max(1, Math.ceil((p / 100) * this.n))); // nearest rank, 1-based
      let seen = 0;
      for (const v of values) {
        seen += this.counts.get(v) ?? 0;
        if (seen >= rank) return v;
      }
      return values[values.length - 1];
    };
    return { count: this.n, mean: this.sum / this.n, p50: at(50), p95: at(95), max: values[values.length - 1] };
  }
}

/** RequestMetrics as plain data for the reporters: the counts, and each distribution as a snapshot. */
export interface RequestMetricsSnapshot {
  readonly requestsCompleted: number;
  readonly requestsAborted: number;
  readonly tokensGenerated: number;
  readonly totalStorageMs: number;
  readonly totalGenerationMs: number;
  readonly multiTurnHits: number;
  readonly multiTurnMisses: number;
  readonly e2e: LatencySnapshot;
  readonly queueWait: LatencySnapshot;
  readonly storage: LatencySnapshot;
  readonly generation: LatencySnapshot;
  readonly prefill: LatencySnapshot;
  readonly decode: LatencySnapshot;
  readonly contextTokens: ContextTokenSummary;
  /** The reference's `qos_metrics` block. */
  readonly qos: Record<string, unknown>;
  readonly raw?: RawSamples;
}

/** Per completed request (latencies, tokens); the per-operation counters are the Recorder's. */
export class RequestMetrics {
  requestsCompleted = 0;
  /** Requests cut short by the end of the run (their I/O is counted, they are not). */
  requestsAborted = 0;
  tokensGenerated = 0;
  totalStorageMs = 0;
  totalGenerationMs = 0;
  multiTurnHits = 0;
  multiTurnMisses = 0;
  readonly e2e = new LatencyHistogram();
  readonly queueWait = new LatencyHistogram();
  readonly storage = new LatencyHistogram();
  readonly generation = new LatencyHistogram();
  readonly prefill = new LatencyHistogram();
  readonly decode = new LatencyHistogram();
  readonly contextTokens = new TokenCounts();
  readonly qos: QosCompliance;
  readonly raw: RawSamples | undefined;

  constructor(qosTargets: Readonly<Record<string, QosTargets>>, keepRawSamples: boolean) {
    this.qos = new QosCompliance(qosTargets);
    this.raw = keepRawSamples ? { end_to_end_latencies: [], storage_latencies: [], generation_latencies: [] } : undefined;
  }

  record(s: RequestSample): void {
    this.requestsCompleted++;
    this.tokensGenerated += s.generatedTokens;
    this.totalStorageMs += s.storageMs;
    this.totalGenerationMs += s.generationMs;
    this.multiTurnHits += s.multiTurnHits;
    this.multiTurnMisses += s.multiTurnMisses;
    this.e2e.recordMs(s.e2eMs);
    this.queueWait.recordMs(s.queueMs);
    this.storage.recordMs(s.storageMs);
    this.generation.recordMs(s.generationMs);
    if (s.prefillMs !== undefined) this.prefill.recordMs(s.prefillMs);
    if (s.decodeMs !== undefined) this.decode.recordMs(s.decodeMs);
    this.contextTokens.record(s.contextTokens);
    this.qos.record(s.qos, s.e2eMs);
    if (this.raw !== undefined) {
      this.raw.end_to_end_latencies.push(s.e2eMs / 1000);
      this.raw.storage_latencies.push(s.storageMs / 1000);
      this.raw.generation_latencies.push(s.generationMs / 1000);
    }
  }

  /** Multi-turn reload results of a request that did not complete still happened. */
  recordAborted(multiTurnHits: number, multiTurnMisses: number): void {
    this.requestsAborted++;
    this.multiTurnHits += multiTurnHits;
    this.multiTurnMisses += multiTurnMisses;
  }

  reset(): void {
    this.requestsCompleted = 0;
    this.requestsAborted = 0;
    this.tokensGenerated = 0;
    this.totalStorageMs = 0;
    this.totalGenerationMs = 0;
    this.multiTurnHits = 0;
    this.multiTurnMisses = 0;
    for (const h of [this.e2e, this.queueWait, this.storage, this.generation, this.prefill, this.decode]) h.reset();
    this.contextTokens.reset();
    this.qos.reset();
    if (this.raw !== undefined) for (const list of Object.values(this.raw) as number[][]) list.length = 0;
  }

  snapshot(): RequestMetricsSnapshot {
    const raw = this.raw;
    return {
      requestsCompleted: this.requestsCompleted,
      requestsAborted: this.requestsAborted,
      tokensGenerated: this.tokensGenerated,
      totalStorageMs: this.totalStorageMs,
      totalGenerationMs: this.totalGenerationMs,
      multiTurnHits: this.multiTurnHits,
      multiTurnMisses: this.multiTurnMisses,
      e2e: this.e2e.snapshot(),
      queueWait: this.queueWait.snapshot(),
      storage: this.storage.snapshot(),
      generation: this.generation.snapshot(),
      prefill: this.prefill.snapshot(),
      decode: this.decode.snapshot(),
      contextTokens: this.contextTokens.summary(),
      qos: this.qos.metrics(),
      ...(raw !== undefined
        ? {
            raw: {
              end_to_end_latencies: [...raw.end_to_end_latencies],
              storage_latencies: [...raw.storage_latencies],
              generation_latencies: [...raw.generation_latencies],
            },
          }
        : {}),
    };
  }
}
