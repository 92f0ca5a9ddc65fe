// A generated Mooncake-format trace for bench:size: `requests` requests of about `blocksPerRequest`
// hash ids each. Each request starts with a shared system prompt (id 0), then continues one of
// `sessions` sessions (a session's earlier prefix, growing by a few ids per turn: multi-turn reuse) or
// starts a fresh one; timestamps 50 ms apart. Deterministic (a fixed linear congruential stream).
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export async function writeSizingTrace(path: string, requests: number, blocksPerRequest: number, sessions: number): Promise<number> {
  let seed = 12345;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const prefixes: number[][] = Array.from({ length: sessions }, () => []);
  let nextId = 1;
  let references = 0;
  const out = createWriteStream(path);
  for (let i = 0; i < requests; i++) {
    const s = Math.floor(rand() * sessions);
    let ids = prefixes[s] ?? [];
    if (ids.length === 0 || ids.length > 2 * blocksPerRequest || rand() < 0.3) ids = [0]; // a new conversation
    const grow = 1 + Math.floor(rand() * 4);
    ids = [...ids];
    for (let k = 0; k < grow; k++) ids.push(nextId++);
    prefixes[s] = ids;
    references += ids.length;
    const line = JSON.stringify({ timestamp: i * 50, input_length: ids.length * 512 - 100, output_length: 100, hash_ids: ids });
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return references;
}
