// A chat request for pipeline tests: every field set, `over` replacing any of them.
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
