// A modelled-TTFT sample for tests: a batch request of 3,000 prompt tokens, no hit, 50 ms either way; `over` replaces any field.
import type { TtftSample } from '../../src/metrics/ttft.js';

export const ttftSample = (over: Partial<TtftSample> = {}): TtftSample => ({
  qos: 'batch',
  promptTokens: 3000,
  hitTokens: 0,
  hitBytes: 0,
  hitLoadMs: 0,
  offloadMs: 50,
  recomputeMs: 50,
  hitComputeMs: 0,
  ...over,
});
