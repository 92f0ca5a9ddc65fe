// A chat request and pipeline options for pipeline tests: every field set, `over` replacing any of them.
import type { PipelineOptions } from '../../src/engine/pipeline.js';
import type { Request } from '../../src/workload/request.js';

export function testRequest(over: Partial<Request> = {}): Request {
  return {
    id: 'u_req_000001',
    kind: 'chat',
    userId: 'u',
    qos: 'batch',
    priority: 1,
    contextTokens: 100,
    generationTokens: 100,
    phase: 'both',
    cacheKey: 'u_req_000001',
    turn: 1,
    previousTurnKeys: [],
    scheduledAtMs: 0,
    ...over,
  };
}

/** Multi-turn on, no generation time, never stopped; `over` names the cache and anything else. */
export function testPipelineOptions(over: Partial<PipelineOptions> & Pick<PipelineOptions, 'cache'>): PipelineOptions {
  return {
    multiTurn: true,
    prefillOnly: false,
    decodeOnly: false,
    decodeBatchSize: 32,
    secondsPerToken: 0,
    sleep: async () => undefined,
    stopped: () => false,
    ...over,
  };
}
