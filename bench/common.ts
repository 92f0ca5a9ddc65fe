// Shared pieces of the bench scripts: argument parsing, the machine line, running the CLI.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Installs fio with apt-get when missing; exits 1 with the reason (prefixed by `script`) when that fails. */
export function ensureFio(script: string): void {
  if (hasCommand('fio')) return;
  const fail = (why: string): never => {
    console.error(`${script}: cannot install fio: ${why}`);
    process.exit(1);
  };
  console.log('fio not found: running `apt-get update && apt-get install -y fio`');
  const r = spawnSync('sh', ['-c', 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y fio'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.error !== undefined) fail(r.error.message);
  if (r.status !== 0) fail(`apt-get exited with ${r.status ?? r.signal ?? 'unknown status'} (root and network access are needed)`);
  if (!hasCommand('fio')) fail('apt-get reported success but fio is still not on PATH');
}

/**
 * Writes (in `dir`) a config file with zero think time for every user type and returns its path:
 * users never pause, so a run measures the data plane or the harness, not simulated users idling.
 */
export function writeZeroThinkConfig(dir: string): string {
  const path = join(dir, 'zero-think.yaml');
  writeFileSync(path, ['user_templates:', ...['chatbot', 'coding', 'document'].map((t) => `  ${t}: { think_time_range: [0, 0] }`)].join('\n'));
  return path;
}

/** Clock ticks per second of /proc/<pid>/stat times. */
export const CLK_TCK = ((): number => {
  const n = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** Fields of a /proc/.../stat line after "(comm) ", 0-based: utime 11, stime 12, cutime 13, cstime 14. */
export function procStatFields(statPath: string): string[] | undefined {
  try {
    const text = readFileSync(statPath, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).trim().split(/\s+/);
  } catch {
    return undefined;
  }
}
