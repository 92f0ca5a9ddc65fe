// Timing a wait that may not happen: harness limits (a payload chunk, a staging buffer) are counted
// only when the caller really waited, so a wait share means time lost, not the number of calls.

/**
 * Awaits `wait`; when `ready` says it had not settled yet, hands the milliseconds it took on `now`'s
 * clock to `waited` (also when it rejects).
 */
export async function awaitCounted<T>(wait: Promise<T>, ready: boolean, now: () => number, waited: (ms: number) => void): Promise<T> {
  if (ready) return wait;
  const t0 = now();
  try {
    return await wait;
  } finally {
    waited(now() - t0);
  }
}
