// kv-cache size's fast path (a source's numbered chains, no key strings) gives the same curves as the
// run's own request generator (the path --max-requests takes), to the last bit, on the committed
// excerpt: one server, and four servers shared and private (round-robin and session routes); blocks
// other than the trace's own (smaller and larger) and a second pass.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sizeRun } from '../../src/engine/sizing.js';
import type { SizingPlan } from '../../src/engine/sizing.js';
import { parse } from '../cli/helpers.js';

const EXCERPT = fileURLToPath(new URL('../../../test/fixtures/mooncake-conversation-300.jsonl', import.meta.url));
const CAPACITIES = [64 * 2 ** 30, 512 * 2 ** 30, 2 ** 40];

async function curves(extra: readonly string[], plan: Omit<SizingPlan, 'capacities'>) {
  const { config } = parse(['--model', 'llama3.1-8b', '--mooncake-trace', EXCERPT, '--replay-cycles', '1', ...extra]);
  const out = await sizeRun(config, { ...plan, capacities: CAPACITIES });
  return {
    requests: out.requests,
    references: out.references,
    deployments: out.deployments.map((d) => ({
      pool: d.pool,
      distinct: d.distinctBlocks,
      bytes: d.distinctBytes,
      probes: d.curve.probePoints(),
      grid: d.curve.gridPoints().filter((_, i) => i % 97 === 0),
      ideal: d.curve.ideal(),
    })),
  };
}

for (const plan of [
  { servers: 1, route: 'round-robin' as const, pools: [] },
  { servers: 4, route: 'round-robin' as const, pools: ['shared' as const, 'private' as const] },
  { servers: 4, route: 'session' as const, pools: ['private' as const] },
]) {
  test(`numbered chains = the run's requests: ${plan.servers} server(s), ${plan.pools.join('+') || 'one pool'}, ${plan.route}`, async () => {
    const fast = await curves([], plan);
    const generic = await curves(['--max-requests', '300'], plan); // --max-requests takes the generic path
    assert.equal(fast.requests, 300);
    assert.deepEqual(fast, generic);
  });
}

for (const extra of [
  ['--kv-block-tokens', '200'],
  ['--kv-block-tokens', '1024'],
  ['--replay-cycles', '2'],
]) {
  test(`numbered chains = the run's requests: ${extra.join(' ')}, 4 servers shared and private (session route)`, async () => {
    const plan = { servers: 4, route: 'session' as const, pools: ['shared' as const, 'private' as const] };
    const requests = extra[0] === '--replay-cycles' ? 600 : 300;
    const fast = await curves(extra, plan);
    const generic = await curves([...extra, '--max-requests', String(requests)], plan);
    assert.equal(fast.requests, requests);
    assert.deepEqual(fast, generic);
  });
}
