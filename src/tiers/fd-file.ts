// An open file as the file tier's hot paths use it: a descriptor and fs's callback calls, each one job on
// libuv's threadpool settling one promise. fs/promises' FileHandle does the same jobs, but builds an
// event-emitting, transferable handle per open and two promise layers per call; with one file per KV
// block that machinery was a third of the main thread's time (docs/performance.md#block-operations-per-cpu-second).
// FileHandle fits FileCalls too, so code written against it takes either.
import { close, closeSync, fstat, fsync, ftruncate, open, read, write } from 'node:fs';
import type { Stats } from 'node:fs';

/** The calls the file tier makes on an open file: FileHandle's names and results, so a FileHandle is one. */
export interface FileCalls {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  truncate(length: number): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A file descriptor with FileCalls. Nothing closes it but close(): callers close it in a `finally`, as
 * they did the FileHandle (whose closing on garbage collection is a leak warning, not a plan).
 */
export class FdFile implements FileCalls {
  private constructor(readonly fd: number) {}

  /** open(2) with `flags` and `mode` on the threadpool. */
  static open(path: string, flags: number, mode = 0o666): Promise<FdFile> {
    return new Promise((resolve, reject) => {
      open(path, flags, mode, (e, fd) => {
        if (e === null) resolve(new FdFile(fd));
        else reject(e);
      });
    });
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    return new Promise((resolve, reject) => {
      read(this.fd, buffer, offset, length, position, (e, bytesRead) => {
        if (e === null) resolve({ bytesRead });
        else reject(e);
      });
    });
  }

  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }> {
    return new Promise((resolve, reject) => {
      write(this.fd, buffer, offset, length, position, (e, bytesWritten) => {
        if (e === null) resolve({ bytesWritten });
        else reject(e);
      });
    });
  }

  truncate(length: number): Promise<void> {
    return new Promise((resolve, reject) => ftruncate(this.fd, length, settled(resolve, reject)));
  }

  sync(): Promise<void> {
    return new Promise((resolve, reject) => fsync(this.fd, settled(resolve, reject)));
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => close(this.fd, settled(resolve, reject)));
  }

  /** close(2) on the calling thread. */
  closeNow(): void {
    closeSync(this.fd);
  }

  stat(): Promise<Stats> {
    return new Promise((resolve, reject) => {
      fstat(this.fd, (e, st) => {
        if (e === null) resolve(st);
        else reject(e);
      });
    });
  }
}

/** A callback for a call with no result: resolves, or rejects with its error. */
function settled(resolve: () => void, reject: (e: Error) => void): (e: NodeJS.ErrnoException | null) => void {
  return (e) => {
    if (e) reject(e);
    else resolve();
  };
}
