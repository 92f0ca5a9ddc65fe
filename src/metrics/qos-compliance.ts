// Per-QoS-class latency and SLA compliance (docs/reference-compat.md#rc-44): a request violates its class's SLA when its
// end-to-end latency exceeds the class's p95 target. Targets come from the effective configuration,
// so config-file overrides reach this evaluation (the reference bound them at import).
import { LatencyHistogram } from './latency.js';

/** Compliance at or above this share counts as "met". */
export const SLA_MET_RATIO = 0.95;

export interface QosTargets {
  readonly targetP95Ms: number;
}

interface ClassState {
  readonly latency: LatencyHistogram;
  requests: number;
  violations: number;
}

export class QosCompliance {
  private readonly classes = new Map<string, ClassState>();

  constructor(private readonly targets: Readonly<Record<string, QosTargets>>) {
    for (const name of Object.keys(targets)) this.classes.set(name, { latency: new LatencyHistogram(), requests: 0, violations: 0 });
  }

  record(qos: string, e2eMs: number): void {
    const state = this.classes.get(qos);
    const target = this.targets[qos];
    if (state === undefined || target === undefined) throw new Error(`unknown QoS class '${qos}'`);
    state.latency.recordMs(e2eMs);
    state.requests++;
    if (e2eMs > target.targetP95Ms) state.violations++;
  }

  /** 1.0 with no requests, as the reference. */
  compliance(qos: string): number {
    const s = this.classes.get(qos);
    return s === undefined || s.requests === 0 ? 1 : 1 - s.violations / s.requests;
  }

  reset(): void {
    for (const s of this.classes.values()) {
      s.latency.reset();
      s.requests = 0;
      s.violations = 0;
    }
  }

  /** The reference's `qos_metrics` block. */
  metrics(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, s] of this.classes) {
      const target = this.targets[name]?.targetP95Ms ?? 0;
      if (s.requests === 0) {
        out[name] = { no_data: true };
        continue;
      }
      const l = s.latency.summary();
      const compliance = this.compliance(name);
      out[name] = {
        total_requests: s.requests,
        latency_ms: { mean: l.mean, p50: l.p50, p95: l.p95, p99: l.p99, max: l.max },
        sla: { target_p95_ms: target, actual_p95_ms: l.p95, compliance, met: compliance >= SLA_MET_RATIO },
        violations: s.violations,
      };
    }
    return out;
  }
}
