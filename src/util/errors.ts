// The message of anything thrown: an Error's message, or the value as text.
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A failure mid-way through measured work, carrying the results gathered until then so they can be saved. */
export class FailedWithPartialResults<T> extends Error {
  constructor(
    what: string,
    readonly partial: T,
    override readonly cause: unknown,
  ) {
    super(`${what} failed: ${messageOf(cause)}`);
  }
}
