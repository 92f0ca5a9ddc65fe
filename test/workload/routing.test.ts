// --route (issue 32): ranks divide a trace with no word between them. Every request is served by
// exactly one rank (or by all, replicating), the same on every rank; round-robin deals requests in
// turn; session keeps every request of one session (first block, else conversation) on one rank.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { routedRank, servesRequest, sessionKeyOf, sessionRank } from '../../src/workload/routing.js';
import type { RoutedRequest } from '../../src/workload/routing.js';

const req = (id: string, first?: string, conversationId?: string): RoutedRequest => ({
  id,
  ...(first !== undefined ? { blocks: [{ key: first, tokens: 512 }] } : {}),
  ...(conversationId !== undefined ? { conversationId } : {}),
});

test('round-robin: request i goes to rank i mod N; replicate and one rank: every rank', () => {
  assert.deepEqual(
    Array.from({ length: 7 }, (_, i) => routedRank('round-robin', 3, i, 'x')),
    [0, 1, 2, 0, 1, 2, 0],
  );
  assert.equal(routedRank('replicate', 4, 5, 'x'), undefined);
  assert.equal(routedRank('session', 1, 5, 'x'), undefined);
  assert.equal(routedRank('round-robin', 1, 5, 'x'), undefined);
});

test('the session of a request: its first block, else its conversation, else itself', () => {
  assert.equal(sessionKeyOf(req('r1', 'kvb_a', 'c1')), 'kvb_a');
  assert.equal(sessionKeyOf(req('r1', undefined, 'c1')), 'c1');
  assert.equal(sessionKeyOf(req('r1')), 'r1');
  // Fixed values: sha256('kvb_a') starts 0x1cc318fe (worked out apart, in Python), the same on every host.
  assert.equal(sessionRank('kvb_a', 4), 0x1cc318fe % 4);
  assert.equal(sessionRank('kvb_a', 7), 0x1cc318fe % 7);
});

test('every request is served by exactly one rank, and a session stays on one rank (property)', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('session' as const, 'round-robin' as const),
      fc.integer({ min: 2, max: 9 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 50 })), { minLength: 1, maxLength: 60 }),
      (mode, worldSize, reqs) => {
        const sessionRanks = new Map<number, Set<number>>();
        reqs.forEach(([session, n], index) => {
          const r = req(`r${n}`, `kvb_${session}`);
          const servers = Array.from({ length: worldSize }, (_, rank) => rank).filter((rank) =>
            servesRequest({ mode, rank, worldSize }, index, r),
          );
          assert.equal(servers.length, 1, `request ${index}: one server`);
          const set = sessionRanks.get(session) ?? new Set();
          set.add(servers[0] ?? -1);
          sessionRanks.set(session, set);
        });
        if (mode === 'session') for (const set of sessionRanks.values()) assert.equal(set.size, 1);
      },
    ),
  );
});

test('session routing spreads sessions over the ranks', () => {
  const counts = [0, 0, 0, 0];
  for (let s = 0; s < 4000; s++) counts[sessionRank(`kvb_${s}`, 4)]++;
  for (const c of counts) assert.ok(c > 850 && c < 1150, `balanced within 15 %: ${counts.join(', ')}`);
});
