// What the S3 end-to-end tests beside s3.test.ts share (issue 35): the radosgw that .ci/run starts
// (test/helpers/radosgw.sh; its endpoint, keys and cluster config in the environment), the command
// run with extra environment variables, a fresh bucket per run and the server's own object count.
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BIN } from './run-cli.js';
import type { CliRun } from './run-cli.js';

export const execFileAsync = promisify(execFile);
export const RADOSGW_SH = fileURLToPath(new URL('../../../test/helpers/radosgw.sh', import.meta.url));
export const ENDPOINT = process.env.KVC_S3_ENDPOINT;
export const RADOSGW_CONF = process.env.KVC_RADOSGW_CONF;
export const RADOSGW_DIR = process.env.KVC_RADOSGW_DIR;

/** Why the radosgw tests cannot run here, or false. */
export const NO_RADOSGW: string | false =
  ENDPOINT === undefined || RADOSGW_CONF === undefined || RADOSGW_DIR === undefined || process.env.AWS_ACCESS_KEY_ID === undefined
    ? 'no radosgw: start one with `eval "$(bash test/helpers/radosgw.sh start)"` (.ci/run does) to run the S3 tests'
    : false;

let buckets = 0;
/** A fresh bucket name per run of this process (`tag` keeps the files' names apart). */
export const freshBucket = (tag: string): string => `kvc-${tag}-${process.pid}-${++buckets}`;

/** The --storage-backend s3 flags of a run against `endpoint`. */
export function s3Args(bucket: string, endpoint = ENDPOINT ?? ''): string[] {
  return ['--storage-backend', 's3', '--s3-endpoint', endpoint, '--s3-bucket', bucket, '--storage-capacity-gb', '4'];
}

/** The command in a child process with extra environment variables; `onStdout` sees the output so far (and the child). */
export function runWith(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  onStdout?: (soFar: string, child: ReturnType<typeof spawn>) => void,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, child);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Objects in the bucket as the server counts them (radosgw-admin bucket stats). */
export async function objectCount(bucket: string): Promise<number> {
  const { stdout } = await execFileAsync('radosgw-admin', ['-c', RADOSGW_CONF ?? '', 'bucket', 'stats', '--bucket', bucket]);
  const stats = JSON.parse(stdout) as { usage: Record<string, { num_objects: number }> };
  return Object.values(stats.usage).reduce((n, u) => n + u.num_objects, 0);
}
