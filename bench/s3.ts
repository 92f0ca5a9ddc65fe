// bench:s3 — the S3 tier's PUT and GET bandwidth against a plain SigV4 client (curl --aws-sigv4) on the
// same server, same object sizes, one object at a time on one connection each, alternating which side
// goes first, ≥ 3 rounds; medians and every round, and CPU seconds per GiB moved (the tier: this
// process's CPU around its operations; curl: its own CPU, read from the shell that waited for it).
// Also the cost of multipart: the largest size uploaded by the tier as one PUT vs as PART_BYTES parts.
//
// Needs a server: `eval "$(bash test/helpers/radosgw.sh start)"` (KVC_S3_ENDPOINT and the AWS_* keys).
// Options: --rounds N (3), --mib-per-size M (256: bytes per side, size and direction in a round).
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ChunkSource } from '../src/data/chunk-source.js';
import { S3Client } from '../src/tiers/s3-client.js';
import { s3ClientOptions, S3_CLIENT_NAME } from '../src/tiers/s3-kind.js';
import { PART_BYTES, S3Backend } from '../src/tiers/s3.js';
import { GiB, MiB } from '../src/util/units.js';
import { numberArgs } from './lib/args.js';
import { table } from './lib/format.js';
import { machineLine } from './lib/machine.js';
import { CLK_TCK } from './lib/proc.js';
import { inRoundOrder, median } from './lib/rounds.js';

const opts = numberArgs({ rounds: 3, 'mib-per-size': 256 });
const endpoint = process.env.KVC_S3_ENDPOINT;
const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
if (endpoint === undefined || accessKeyId === undefined || secretAccessKey === undefined) {
  console.error(
    'bench:s3 needs KVC_S3_ENDPOINT, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: eval "$(bash test/helpers/radosgw.sh start)"',
  );
  process.exit(2);
}
const SIZES = [16 * MiB, 64 * MiB, 256 * MiB];
const BUCKET = `kvc-bench-${process.pid}`;
const REGION = process.env.AWS_REGION ?? 'us-east-1';

/** One side's figures for one size and direction in one round. */
interface Measure {
  readonly mibPerSec: number;
  readonly cpuSecPerGiB: number;
}

/** The same random bytes for both sides: the tier sends them from one 4 MiB buffer, curl from a file of the object's size. */
const block = randomBytes(4 * MiB);
function sourceOf(size: number): ChunkSource {
  return {
    size,
    async *chunks() {
      for (let off = 0; off < size; off += block.length) yield block.subarray(0, Math.min(block.length, size - off));
    },
  };
}

const client = () =>
  new S3Client(
    s3ClientOptions({ endpoint, bucket: BUCKET, createBucket: false, prefix: '', pathStyle: true }, 4, () =>
      Promise.resolve({ accessKeyId, secretAccessKey }),
    ),
  );

function cpuSec(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1e6;
}

/** The tier: `count` objects of `size` written one after another, then read back; S3Backend as a run uses it. */
async function tier(size: number, count: number, multipartAbove?: number): Promise<{ put: Measure; get: Measure }> {
  const backend = new S3Backend(client(), 'tier/', 'bench000', multipartAbove, PART_BYTES);
  try {
    const gib = (size * count) / GiB;
    let c0 = process.cpuUsage();
    let t0 = performance.now();
    for (let i = 0; i < count; i++) await backend.write(`o${i}`, sourceOf(size));
    const put = { mibPerSec: (size * count) / MiB / ((performance.now() - t0) / 1000), cpuSecPerGiB: cpuSec(c0) / gib };
    c0 = process.cpuUsage();
    t0 = performance.now();
    for (let i = 0; i < count; i++) await backend.read(`o${i}`);
    const get = { mibPerSec: (size * count) / MiB / ((performance.now() - t0) / 1000), cpuSecPerGiB: cpuSec(c0) / gib };
    return { put, get };
  } finally {
    await backend.close();
  }
}

/** curl's command line for one request per URL in one process (one connection, reused). */
function curlArgs(): string[] {
  return [
    '-sS',
    '--fail',
    '--aws-sigv4',
    `aws:amz:${REGION}:s3`,
    '--user',
    `${accessKeyId}:${secretAccessKey}`,
    '-H',
    'x-amz-content-sha256: UNSIGNED-PAYLOAD',
  ];
}

/** Runs curl under a shell that prints its reaped children's CPU (cutime + cstime) afterwards; returns wall and CPU seconds. */
function curlRun(args: readonly string[]): Promise<{ wallSec: number; cpuSec: number }> {
  const script = 'curl "$@" >/dev/null || exit 1; f=$(sed "s/.*) //" /proc/$$/stat); set -- $f; echo "${14} ${15}"';
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('bash', ['-c', script, 'bash', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`curl failed (exit ${code})`));
      const [u, s] = out.trim().split(/\s+/).map(Number);
      resolve({ wallSec: (performance.now() - t0) / 1000, cpuSec: ((u ?? 0) + (s ?? 0)) / CLK_TCK });
    });
  });
}

async function curl(size: number, count: number, file: string): Promise<{ put: Measure; get: Measure }> {
  const url = (i: number): string => `${endpoint}/${BUCKET}/curl/o${i}`;
  const gib = (size * count) / GiB;
  const put = await curlRun([...curlArgs(), ...Array.from({ length: count }, (_, i) => ['-T', file, url(i)]).flat()]);
  const get = await curlRun([...curlArgs(), ...Array.from({ length: count }, (_, i) => [url(i), '-o', '/dev/null']).flat()]);
  await curlRun([...curlArgs(), '-X', 'DELETE', ...Array.from({ length: count }, (_, i) => url(i))]);
  return {
    put: { mibPerSec: (size * count) / MiB / put.wallSec, cpuSecPerGiB: put.cpuSec / gib },
    get: { mibPerSec: (size * count) / MiB / get.wallSec, cpuSecPerGiB: get.cpuSec / gib },
  };
}

type Side = 'tier' | 'curl' | 'tier-multipart';

async function main(): Promise<void> {
  console.log(
    machineLine(
      `load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    ),
  );
  console.log(`date: ${new Date().toISOString()}; server: ${endpoint}; tier client: ${S3_CLIENT_NAME}; curl: curl --aws-sigv4`);
  console.log(`command: npm run bench:s3 -- --rounds ${opts.rounds} --mib-per-size ${opts['mib-per-size']}`);
  await curlRun([...curlArgs(), '-X', 'PUT', `${endpoint}/${BUCKET}`]);
  const dir = mkdtempSync(join(tmpdir(), 'kvc-bench-s3-'));
  const results = new Map<string, Measure[]>();
  const note = (side: Side, size: number, dir_: 'PUT' | 'GET', m: Measure): void => {
    const k = `${side}|${size}|${dir_}`;
    results.set(k, [...(results.get(k) ?? []), m]);
  };
  try {
    const files = new Map(SIZES.map((s) => [s, join(dir, `o${s}`)]));
    for (const s of SIZES)
      writeFileSync(files.get(s) ?? '', Buffer.concat(Array.from({ length: Math.ceil(s / block.length) }, () => block)).subarray(0, s));
    // Warm-up: the first requests create the server's pools.
    await tier(16 * MiB, 1);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const size of SIZES) {
        const count = Math.max(1, Math.round((opts['mib-per-size'] * MiB) / size));
        const sides: Side[] = size === SIZES[SIZES.length - 1] ? ['tier', 'curl', 'tier-multipart'] : ['tier', 'curl'];
        for (const side of inRoundOrder(round, sides)) {
          const r =
            side === 'curl'
              ? await curl(size, count, files.get(size) ?? '')
              : await tier(size, count, side === 'tier-multipart' ? 0 : undefined);
          note(side, size, 'PUT', r.put);
          note(side, size, 'GET', r.get);
          console.log(
            `round ${round} ${side} ${size / MiB} MiB ×${count}: PUT ${r.put.mibPerSec.toFixed(0)} MiB/s, GET ${r.get.mibPerSec.toFixed(0)} MiB/s`,
          );
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await curlRun([...curlArgs(), '-X', 'DELETE', `${endpoint}/${BUCKET}`]).catch(() => undefined);
  }
  const rows: string[][] = [];
  for (const size of SIZES)
    for (const d of ['PUT', 'GET'] as const) {
      const of = (side: Side) => results.get(`${side}|${size}|${d}`) ?? [];
      const tierBw = of('tier').map((m) => m.mibPerSec);
      const curlBw = of('curl').map((m) => m.mibPerSec);
      const ratio = tierBw.map((t, i) => t / (curlBw[i] ?? NaN));
      const row = (side: Side, extra: string): string[] => {
        const ms = of(side);
        return [
          `${size / MiB} MiB`,
          d,
          side,
          median(ms.map((m) => m.mibPerSec)).toFixed(0),
          ms.map((m) => m.mibPerSec.toFixed(0)).join(' '),
          median(ms.map((m) => m.cpuSecPerGiB)).toFixed(2),
          extra,
        ];
      };
      rows.push(row('tier', `${median(ratio).toFixed(2)} (${ratio.map((r) => r.toFixed(2)).join(' ')})`));
      rows.push(row('curl', ''));
      if (of('tier-multipart').length > 0) rows.push(row('tier-multipart', ''));
    }
  console.log('');
  console.log(table(['size', 'op', 'side', 'MiB/s median', 'every round', 'CPU s/GiB', 'tier ÷ curl (rounds)'], rows));
}

await main();
