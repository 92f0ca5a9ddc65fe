// The autoscaler's decisions (docs/reference-compat.md#rc-36), from windowed samples: each sample covers only the last
// interval (the reference used cumulative p95s and throughput). Pure: the run feeds it
// samples and applies the user count it returns; the dispatcher really starts and stops users.

export type AutoscalerMode = 'qos' | 'capacity';
export type ScaleAction = 'scale_up' | 'scale_down' | 'hold' | 'cooldown' | 'stop';

export interface AutoscaleSample {
  /** Seconds since the measured phase started. */
  readonly atSec: number;
  readonly readP95Ms: number;
  readonly writeP95Ms: number;
  /** Storage bytes per second moved in the window (read + write). */
  readonly storageBytesPerSec: number;
  /** Generated tokens per second completed in the window. */
  readonly tokensPerSec: number;
  readonly queueDepth: number;
}

export interface AutoscalerSettings {
  readonly mode: AutoscalerMode;
  readonly targetSaturation: number;
  readonly minUsers: number;
  readonly maxUsers: number;
  readonly scaleUpFactor: number;
  readonly scaleDownFactor: number;
  readonly consecutiveSamplesRequired: number;
  readonly readLatencyP95ThresholdMs: number;
  readonly historyWindowSize: number;
}

export interface ScaleEvent {
  readonly timestamp: number;
  readonly mode: AutoscalerMode;
  readonly action: ScaleAction;
  /** The reference's field: the user count after the decision (= users_after). */
  readonly users: number;
  /** Users in force while the sample was taken: the load that produced this sample's figures. */
  readonly users_during: number;
  /** Users from this decision on (what the next sample will be taken with). */
  readonly users_after: number;
  readonly saturation_level: number;
  readonly read_latency_p95_ms: number;
  readonly write_latency_p95_ms: number;
  readonly throughput_tokens_per_sec: number;
  readonly peak_throughput_tokens_per_sec?: number;
}

/** Cool-down samples after a scale-down in qos mode, as the reference. */
const COOLDOWN_SAMPLES = 3;
/** Capacity mode: a new peak must beat the old by this factor. */
const PEAK_MARGIN = 1.01;
/** Capacity mode stops after this many measured user counts without a new peak. */
const CAPACITY_PATIENCE = 2;

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function coefficientOfVariation(xs: readonly number[]): number {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (mean === 0) return 0;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  return Math.sqrt(variance) / mean;
}

function slope(ys: readonly number[]): number {
  const n = ys.length;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
}

export class Autoscaler {
  private readonly history: AutoscaleSample[] = [];
  private users: number;
  private cooldown = 0;
  private overTarget = 0;
  private peak = { tokensPerSec: 0, users: 0 };
  private sincePeak = 0;
  /** Capacity mode: throughputs of the samples taken so far at the current user count. */
  private level: number[] = [];
  /** Capacity mode: user counts measured to the end (each over consecutiveSamplesRequired samples). */
  private levelsMeasured = 0;
  readonly events: ScaleEvent[] = [];
  readonly initialUsers: number;

  constructor(
    private readonly s: AutoscalerSettings,
    initialUsers: number,
  ) {
    this.users = clamp(initialUsers, s.minUsers, s.maxUsers);
    this.initialUsers = this.users;
  }

  get currentUsers(): number {
    return this.users;
  }

  get peakUsers(): number {
    return this.peak.users;
  }

  get peakTokensPerSec(): number {
    return this.peak.tokensPerSec;
  }

  /**
   * Saturation in [0, 1] over the recent window: the worst read p95 against the threshold, halved
   * unless bandwidth has flattened (CV < 0.1) while read latency still climbs.
   */
  saturation(): number {
    const recent = this.history.slice(-this.s.historyWindowSize);
    if (recent.length < 2) return 0;
    const latencyFactor = Math.min(Math.max(...recent.map((x) => x.readP95Ms)) / this.s.readLatencyP95ThresholdMs, 1);
    const plateau =
      coefficientOfVariation(recent.map((x) => x.storageBytesPerSec)) < 0.1 && slope(recent.map((x) => x.readP95Ms)) > 0 ? 1 : 0.5;
    return latencyFactor * plateau;
  }

  /** Takes one sample and returns the decision; `users` / `users_after` in the event is the count to run now. */
  observe(sample: AutoscaleSample): ScaleEvent {
    this.history.push(sample);
    const usersDuring = this.users;
    const sat = this.saturation();
    const action = this.s.mode === 'qos' ? this.decideQos(sat) : this.decideCapacity(sample);
    const event: ScaleEvent = {
      timestamp: sample.atSec,
      mode: this.s.mode,
      action,
      users: this.users,
      users_during: usersDuring,
      users_after: this.users,
      saturation_level: sat,
      read_latency_p95_ms: sample.readP95Ms,
      write_latency_p95_ms: sample.writeP95Ms,
      throughput_tokens_per_sec: sample.tokensPerSec,
      ...(action === 'stop' ? { peak_throughput_tokens_per_sec: this.peak.tokensPerSec } : {}),
    };
    this.events.push(event);
    return event;
  }

  private decideQos(sat: number): ScaleAction {
    const target = this.s.targetSaturation;
    if (this.cooldown > 0) {
      this.cooldown--;
      return 'cooldown';
    }
    if (sat > 1.1 * target) {
      if (++this.overTarget < this.s.consecutiveSamplesRequired) return 'hold';
      this.overTarget = 0;
      const next = Math.max(Math.floor(this.users * this.s.scaleDownFactor), this.s.minUsers);
      this.cooldown = COOLDOWN_SAMPLES;
      return this.setUsers(next, 'scale_down');
    }
    this.overTarget = 0;
    if (sat < 0.9 * target) {
      // At least one more user: the reference's floor(users × 1.2) could never grow a count below 5.
      const next = Math.min(Math.max(this.users + 1, Math.floor(this.users * this.s.scaleUpFactor)), this.s.maxUsers);
      return this.setUsers(next, 'scale_up');
    }
    return 'hold';
  }

  /**
   * Capacity mode. Each user count is measured over `consecutiveSamplesRequired` consecutive samples
   * and credited with the LOWEST of them: the throughput it sustained, not its luckiest 2-second
   * burst (one noisy sample of 1,197 tok/s among 755, 780 and 1,133 was once reported as the peak).
   * The min over a level rather than over any k consecutive samples: in this mode the user count
   * grows after every new peak, so a window straddling two counts would credit a throughput to no
   * single count; at one count, "every sample reached at least X" is what sustained means, and a
   * moving median of two samples would be their mean, still lifted by one burst. A new peak must beat
   * the old by 1 % (as the reference); after CAPACITY_PATIENCE counts without one, the run stops.
   * With consecutive_samples_required = 1 this is the reference's one-sample rule.
   */
  private decideCapacity(sample: AutoscaleSample): ScaleAction {
    this.level.push(sample.tokensPerSec);
    if (this.level.length < Math.max(1, this.s.consecutiveSamplesRequired)) return 'hold';
    const sustained = Math.min(...this.level);
    this.level = [];
    const first = this.levelsMeasured++ === 0;
    if (first || sustained > PEAK_MARGIN * this.peak.tokensPerSec) {
      this.peak = { tokensPerSec: sustained, users: this.users };
      this.sincePeak = 0;
      const step = clamp(Math.floor(this.users * (first ? 0.4 : 0.2)), 5, 100);
      return this.setUsers(Math.min(this.users + step, this.s.maxUsers), 'scale_up');
    }
    if (++this.sincePeak >= CAPACITY_PATIENCE) return 'stop';
    return 'hold';
  }

  private setUsers(next: number, action: ScaleAction): ScaleAction {
    if (next === this.users) return 'hold';
    this.users = next;
    return action;
  }

  /** The reference's `autoscaling_summary`. */
  summary(): Record<string, number> {
    const changes = this.events.filter((e) => e.action === 'scale_up' || e.action === 'scale_down').length;
    return {
      initial_users: this.initialUsers,
      final_users: this.users,
      total_scale_events: changes,
      ...(this.s.mode === 'capacity' ? { peak_user_count: this.peak.users, peak_throughput_tokens_per_sec: this.peak.tokensPerSec } : {}),
    };
  }
}
