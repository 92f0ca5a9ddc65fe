// Requests' block chains with their keys as numbers, laid out flat, a batch of requests at a time:
// what a source that names its blocks (a Mooncake trace) hands `kv-cache size` (engine/sizing.ts), so
// the pass makes no key string, no object per block and no promise per request.

/** A batch of requests' chains; keys are numbered 0, 1, 2, … in order of first appearance in the source. */
export interface NumberedChains {
  readonly requests: number;
  /** Per request: when it is due at the recording's own pace (ms). */
  readonly scheduledAtMs: Float64Array;
  /** Request i's blocks are entries starts[i] … starts[i + 1] − 1 of `keys` and `tokens`. */
  readonly starts: Int32Array;
  readonly keys: Int32Array;
  readonly tokens: Int32Array;
  /** Request i's first block's key as a run names it (the session key of --route session). */
  sessionKey(request: number): string;
}

/** Collects chains block by block into the flat arrays of NumberedChains; reused from batch to batch. */
export class ChainColumns {
  private keys = new Int32Array(4096);
  private tokens = new Int32Array(4096);
  private blocks = 0;
  private starts: number[] = [0];

  /** Appends a block to the current request's chain. */
  block(key: number, tokens: number): void {
    if (this.blocks === this.keys.length) this.grow();
    this.keys[this.blocks] = key;
    this.tokens[this.blocks] = tokens;
    this.blocks++;
  }

  /** Ends the current request's chain. */
  endChain(): void {
    this.starts.push(this.blocks);
  }

  /** The chains collected since the last call (one scheduled time and session key per chain), and a fresh start. */
  take(scheduledAtMs: Float64Array, sessionKey: (request: number) => string): NumberedChains {
    const out: NumberedChains = {
      requests: this.starts.length - 1,
      scheduledAtMs,
      starts: Int32Array.from(this.starts),
      keys: this.keys.slice(0, this.blocks),
      tokens: this.tokens.slice(0, this.blocks),
      sessionKey,
    };
    this.blocks = 0;
    this.starts = [0];
    return out;
  }

  private grow(): void {
    const keys = new Int32Array(this.keys.length * 2);
    keys.set(this.keys);
    this.keys = keys;
    const tokens = new Int32Array(this.tokens.length * 2);
    tokens.set(this.tokens);
    this.tokens = tokens;
  }
}
