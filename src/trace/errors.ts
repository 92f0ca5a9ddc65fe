// Typed errors of the I/O trace: a malformed line names its file and line so a user can open the
// trace at the fault; a failed trace log names its path and keeps the system error as `cause`.

/** A line of a trace that is not a valid row (or a missing/wrong header). */
export class TraceFormatError extends Error {
  constructor(
    /** The trace file, or undefined when parsing a detached line. */
    readonly file: string | undefined,
    /** 1-based physical line number where the bad record starts. */
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file ?? '<trace>'}:${line}: ${reason}`);
    this.name = 'TraceFormatError';
  }
}

/** The trace log could not be created, written, compressed or finalized. */
export class TraceWriteError extends Error {
  constructor(
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`I/O trace log ${path}: ${detail}`, options);
    this.name = 'TraceWriteError';
  }
}

/** The `zstd` process failed to start or exited with an error. */
export class ZstdError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ZstdError';
  }
}

export { messageOf } from '../util/errors.js';
