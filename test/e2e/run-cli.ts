// Runs the real `kv-cache` command (through its bootstrap) in a child process.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTempDir } from '../util/temp-dir.js';

export const BIN = fileURLToPath(new URL('../../../bin/kv-cache.cjs', import.meta.url));

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the command; `onStart` may signal the child (e.g. SIGINT after a delay); `onStdout` sees the
 * output gathered so far at each chunk (to act once a line appears).
 */
export function runCli(
  args: readonly string[],
  opts: {
    cwd?: string;
    onStart?: (kill: (s: NodeJS.Signals) => void) => void;
    onStdout?: (soFar: string) => void;
    /** Set in the child's environment, over this process's. */
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = opts.env === undefined ? process.env : { ...process.env, ...opts.env };
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(stdout);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    opts.onStart?.((s) => child.kill(s));
  });
}

/** A quick storage-only run of the small model, two users (a prefix of the flags). */
export const QUICK_RUN: readonly string[] = [
  '--model',
  'tiny-1b',
  '--generation-mode',
  'none',
  '--no-progress',
  '--num-users',
  '2',
  '--gpu-mem-gb',
  '0',
  '--cpu-mem-gb',
  '0',
];

/** Small, quick users so that a test run moves megabytes, not gigabytes (a --config file's text). */
export const SMALL_USERS = `user_templates:
  chatbot: { context_range: [64, 512], generation_range: [16, 64], think_time_range: [0.01, 0.05] }
  coding: { context_range: [256, 1024], generation_range: [16, 64], think_time_range: [0.01, 0.05] }
  document: { context_range: [256, 1024], generation_range: [16, 64], think_time_range: [0.01, 0.05] }
`;

/** Writes the SMALL_USERS config into `dir` and returns the flags every quick test run starts with. */
export async function smallWorkloadArgs(dir: string): Promise<string[]> {
  const config = join(dir, 'small.yaml');
  await writeFile(config, SMALL_USERS);
  return ['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress', '--config', config];
}

/** Runs `fn` in a fresh temp dir that is removed afterwards, whatever happens. */
export const inTempDir = <T>(fn: (dir: string) => Promise<T>): Promise<T> => withTempDir(fn, 'kvcache-e2e-');

/** A ShareGPT file's text: one conversation per entry of `turns` ('a', 'b', …), each turn a question and an answer. */
export function shareGptText(turns: readonly number[]): string {
  const conv = (id: string, n: number) => ({
    id,
    conversations: Array.from({ length: n }, (_, t) => [
      { from: 'human', value: `question ${t} `.repeat(40) },
      { from: 'gpt', value: `answer ${t} `.repeat(20) },
    ]).flat(),
  });
  return JSON.stringify(turns.map((n, i) => conv(String.fromCharCode(97 + i), n)));
}

/** A replay trace of paced rows 4 ms apart (8 s of trace): writes, reads and deletes of 256 KiB entries. */
export function pacedTrace(): string {
  const rows = ['Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase'];
  let t = 1_000;
  for (let i = 0; i < 700; i++) {
    for (const [op, phase] of [
      ['Write', 'Prefill'],
      ['Read', 'Decode'],
      ['Delete', 'Evict'],
    ] as const) {
      rows.push(`${t.toFixed(6)},${op},262144,Tier-2,k${i},${phase}`);
      t += 0.004;
    }
  }
  return `${rows.join('\n')}\n`;
}
