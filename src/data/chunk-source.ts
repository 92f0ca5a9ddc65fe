// The bytes of one entry as a stream: what the payload generators produce and every tier's write
// consumes. It lives with the data, below the tiers, so the generators need nothing from the tiers.

/**
 * The bytes of one entry, delivered in order as chunks. Contract: a chunk is valid only until the
 * consumer asks for the next one (its memory is then reused), and the chunks' lengths add up to `size`.
 * A backend that keeps no bytes (null, simulated GPU) may ignore `chunks` entirely, so producing
 * bytes must be lazy.
 */
export interface ChunkSource {
  readonly size: number;
  chunks(): AsyncIterable<Uint8Array>;
}

/** The source's next chunk that is not empty; undefined once it is over. */
export async function nextNonEmpty(it: AsyncIterator<Uint8Array>): Promise<Uint8Array | undefined> {
  for (;;) {
    const next = await it.next();
    if (next.done === true) return undefined;
    if (next.value.length > 0) return next.value;
  }
}
