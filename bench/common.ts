// Shared pieces of the bench scripts: argument parsing, the machine line, running the CLI.
import { spawn } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/kv-cache.cjs', import.meta.url));

/** `--name value` options with numeric defaults. */
export function numberArgs<T extends Record<string, number>>(defaults: T): T {
  const out: Record<string, number> = { ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]?.replace(/^--/, '') ?? '';
    if (!(name in defaults)) throw new Error(`unknown option --${name}; valid: ${Object.keys(defaults).map((k) => `--${k}`).join(' ')}`);
    const v = Number(argv[++i]);
    if (!Number.isFinite(v)) throw new Error(`--${name} needs a number`);
    out[name] = v;
  }
  return out as T;
}

export function machineLine(): string {
  return `machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, Node ${process.version}`;
}

/** Runs kv-cache with `args`; `onPid` sees the child's pid (for sampling /proc). */
export function runKvCache(args: readonly string[], onPid?: (pid: number) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (child.pid !== undefined) onPid?.(child.pid);
  });
}
