// zstd through the system `zstd` command (Debian package `zstd`), spawned as a child process.
//
// Why a process and not an npm package: Node 20's zlib has no zstd (it arrives in 22.15), and the
// maintained npm bindings are native addons whose install script first downloads a prebuilt binary
// from GitHub (impossible offline) and then falls back to a node-gyp compile (zstd-napi: about a
// minute on two cores, needs a C++ toolchain, and under npm 11 only if approved in `allowScripts`;
// @mongodb-js/zstd's fallback even downloads the zstd sources). The `zstd` binary is in the machine
// image, .ci/run installs it where it is missing, it is the very tool users open traces with (so
// the output is standard by construction), and compressing in another process keeps the work off
// the event loop whose timers the benchmark measures by. The cost: one spawn per trace file.
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { ZstdError, messageOf } from './errors.js';

/** Every zstd frame starts with these bytes (RFC 8878 §3.1.1). */
export const ZSTD_MAGIC: readonly number[] = [0x28, 0xb5, 0x2f, 0xfd];
/** The reference's compression level. */
export const ZSTD_LEVEL = 3;
export const DEFAULT_ZSTD_COMMAND = 'zstd';

export function hasZstdSuffix(path: string): boolean {
  return path.endsWith('.zst');
}

export function isZstdMagic(head: Uint8Array): boolean {
  return head.length >= ZSTD_MAGIC.length && ZSTD_MAGIC.every((b, i) => head[i] === b);
}

/** Whether the file at `path` starts with the zstd magic bytes (it is opened and its first bytes read). */
export async function startsWithZstdMagic(path: string): Promise<boolean> {
  // Non-blocking, as every open of an input: the path was checked, but may name a FIFO by now (its read then fails, never waits).
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const head = new Uint8Array(ZSTD_MAGIC.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return isZstdMagic(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** How a finished zstd process ended: null when it succeeded. */
export type ZstdOutcome = ZstdError | null;

/** A running zstd and the promise of how it ends (never rejects). */
export interface ZstdProcess {
  readonly child: ChildProcess;
  readonly outcome: Promise<ZstdOutcome>;
  /** True once the process has exited. */
  readonly exited: () => boolean;
}

const STDERR_LIMIT = 4096;

/**
 * Starts `command args`, resolving once it is running. A missing binary rejects with a ZstdError that
 * says how to install it.
 */
export async function startZstd(command: string, args: readonly string[], stdio: StdioOptions): Promise<ZstdProcess> {
  const child = spawn(command, args, { stdio });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    if (stderr.length < STDERR_LIMIT) stderr += text;
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) => {
      const hint = (err as NodeJS.ErrnoException).code === 'ENOENT' ? ' (install the zstd package, e.g. apt-get install zstd)' : '';
      reject(new ZstdError(`cannot run ${command}: ${messageOf(err)}${hint}`, { cause: err }));
    });
  });
  // Later errors (e.g. a failed kill) also end in 'close', which `outcome` reports.
  child.on('error', () => undefined);
  let done = false;
  const outcome = new Promise<ZstdOutcome>((resolve) => {
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      done = true;
      if (code === 0) return resolve(null);
      const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
      const said = stderr.trim();
      resolve(new ZstdError(`${command} ${args.join(' ')} ${how}${said === '' ? '' : `: ${said}`}`));
    });
  });
  return { child, outcome, exited: () => done };
}
