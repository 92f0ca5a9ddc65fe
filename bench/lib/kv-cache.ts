// Running the kv-cache CLI from a bench script: its path, storage-only arguments, a zero-think config.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const KV_BIN = join(PROJECT_ROOT, 'bin', 'kv-cache.cjs');

/** Runs kv-cache with `args`; `onPid` sees the child's pid (for sampling /proc); `bin` and `env` (added to this process's) pick another build or setting. */
export function runKvCache(
  args: readonly string[],
  onPid?: (pid: number) => void,
  options: { readonly bin?: string; readonly env?: Readonly<Record<string, string>> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runNodeScript(options.bin ?? KV_BIN, args, onPid, options.env);
}

/** Runs `script` with this Node and `args`, its output collected; `env` is added to this process's. */
export function runNodeScript(
  script: string,
  args: readonly string[],
  onPid?: (pid: number) => void,
  extraEnv?: Readonly<Record<string, string>>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...extraEnv };
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (child.pid !== undefined) onPid?.(child.pid);
  });
}

/**
 * Writes (in `dir`) a config file with zero think time for every user type and returns its path:
 * users never pause, so a run measures the data plane or the harness, not simulated users idling.
 */
export function writeZeroThinkConfig(dir: string): string {
  const path = join(dir, 'zero-think.yaml');
  writeFileSync(
    path,
    ['user_templates:', ...['chatbot', 'coding', 'document'].map((t) => `  ${t}: { think_time_range: [0, 0] }`)].join('\n'),
  );
  return path;
}

export interface StorageOnlyRun {
  readonly model: string;
  readonly users: number;
  readonly seconds: number;
  readonly cacheDir: string;
  readonly capacityGiB: number;
  readonly output: string;
  /** A --config file (e.g. zero think time). */
  readonly config?: string;
  /** A write-only (prefill) or read-only (decode) node, without multi-turn and prefix caching. */
  readonly node?: 'prefill' | 'decode';
}

/** Arguments of a storage-only run: no GPU or CPU tier, no generation time, seed 1, no progress lines. */
export function storageOnlyArgs(r: StorageOnlyRun): string[] {
  return [
    '--model',
    r.model,
    '--num-users',
    String(r.users),
    '--duration',
    String(r.seconds),
    '--gpu-mem-gb',
    '0',
    '--cpu-mem-gb',
    '0',
    '--generation-mode',
    'none',
    ...(r.config === undefined ? [] : ['--config', r.config]),
    ...(r.node === undefined
      ? []
      : [r.node === 'prefill' ? '--prefill-only' : '--decode-only', '--disable-multi-turn', '--disable-prefix-caching']),
    '--cache-dir',
    r.cacheDir,
    '--create-cache-dir',
    '--storage-capacity-gb',
    String(r.capacityGiB),
    '--seed',
    '1',
    '--no-progress',
    '--output',
    r.output,
  ];
}
