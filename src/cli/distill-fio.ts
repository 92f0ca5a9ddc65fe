// `kv-cache distill-fio FILE`: the fio job of a traced workload, from a results JSON (ours or the
// reference's: device_latency_tracing's bucket lists) or from saved bpftrace output (what
// `bpftrace` or `kv-cache trace` printed). The upstream tool's options: -o, --stdout, --window-s,
// --max-iodepth. Bad input: one message, exit 2, nothing written.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as z from 'zod';
import { captureFromOutput } from '../telemetry/capture.js';
import type { TraceCapture } from '../metrics/trace-capture.js';
import { DEFAULT_MAX_IODEPTH, distillFio } from '../telemetry/distill.js';
import type { Bucket } from '../metrics/trace-capture.js';
import { fileStamp } from '../util/dates.js';
import { checkInputFile } from '../util/input-file.js';
import { GiB } from '../util/units.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import { parseSubcommandArgs } from './sub-args.js';

export const DISTILL_HELP = `Usage: kv-cache distill-fio FILE [-o OUT.ini | --stdout] [--window-s S] [--max-iodepth N]

Distils a fio job file from a traced workload. FILE is a results JSON of a run with
--enable-latency-tracing (or the reference's), or saved bpftrace output (kv-cache trace -o, bpftrace).
  -o, --output FILE   where to write the job (default fio_traced_<YYYYmmdd_HHMMSS>.ini here)
  --stdout            print the job instead of writing it
  --window-s S        the capture's length in seconds (for Little's law; saved output has none)
  --max-iodepth N     upper clamp of iodepth (default ${DEFAULT_MAX_IODEPTH})`;

interface DistillArgs {
  readonly file: string;
  readonly output?: string;
  readonly windowSec?: number;
  readonly maxIodepth: number;
}

const BucketsSchema = z.array(
  z.looseObject({ range_us: z.tuple([z.number(), z.number().nullable()]), count: z.number().int().nonnegative() }),
);
const ResultsTracingSchema = z.looseObject({
  device_latency_tracing: z.record(z.string(), z.looseObject({ buckets: BucketsSchema })),
  kvcache_bench: z
    .looseObject({
      latency_tracing: z
        .looseObject({
          block_filter: z.string().nullable().optional(),
          process_id: z.number().nullable().optional(),
          window_sec: z.number().nullable().optional(),
          block_requests: z
            .looseObject({
              read: z.number(),
              write: z.number(),
              completed_read: z.number(),
              completed_write: z.number(),
              device_time_sec: z.number(),
            })
            .nullable()
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

/** A results document's capture: its histograms, and its exact totals and window when it is ours. */
export function captureFromResults(json: unknown, file: string): TraceCapture {
  const parsed = ResultsTracingSchema.safeParse(json);
  if (!parsed.success)
    throw new ConfigError([
      `${file}: a JSON file without device_latency_tracing histograms (expected the results of a run with --enable-latency-tracing)`,
    ]);
  const d = parsed.data;
  const lt = d.kvcache_bench?.latency_tracing;
  const histograms: Record<string, Bucket[]> = {};
  for (const [name, h] of Object.entries(d.device_latency_tracing))
    histograms[name] = h.buckets.map((b) => ({ lo: b.range_us[0], hi: b.range_us[1], count: b.count }));
  const br = lt?.block_requests ?? null;
  const scalars: Record<string, number> =
    br === null
      ? {}
      : {
          issued_read: br.read,
          issued_write: br.write,
          completed_read: br.completed_read,
          completed_write: br.completed_write,
          d2c_sum_us_read: br.device_time_sec * 1e6,
          d2c_sum_us_write: 0,
        };
  return {
    filters: {
      device: { kind: 'recorded', text: lt?.block_filter ?? 'as recorded in the file' },
      pid: lt?.process_id ?? null,
      syscalls: 'positioned',
    },
    windowSec: lt?.window_sec ?? null,
    histograms,
    scalars,
    truncated: false,
    unreadLines: 0,
  };
}

/** Results files and saved bpftrace output are far smaller; a larger FILE is refused before it is read. */
const MAX_CAPTURE_BYTES = GiB;

/** FILE as a capture: JSON results, else bpftrace text. */
export function captureFromFile(file: string): TraceCapture {
  // A FIFO or a device would never end: the shared guard refuses them before reading.
  const check = checkInputFile(file, { maxBytes: MAX_CAPTURE_BYTES });
  if (!check.ok) throw new ConfigError([`${file}: cannot be read (${check.problem})`]);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError([`${file}: cannot be read (${messageOf(e)})`]);
  }
  if (/^\s*[{[]/.test(text)) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new ConfigError([`${file}: not valid JSON (${messageOf(e)}); expected a results file or saved bpftrace output`]);
    }
    return captureFromResults(json, file);
  }
  const c = captureFromOutput(text, { device: { kind: 'recorded', text: 'as recorded in the file' }, pid: null, syscalls: 'all' }, null);
  if (Object.keys(c.histograms).length === 0 && Object.keys(c.scalars).length === 0)
    throw new ConfigError([
      `${file}: no bpftrace maps found (expected lines like '@d2c_read_us:' followed by buckets like '[512, 1K)   3 |@@|')`,
    ]);
  return c;
}

function parseDistillArgs(argv: readonly string[], now: Date): DistillArgs & { toStdout: boolean } {
  const parsed = parseSubcommandArgs(
    argv,
    {
      output: { type: 'string', short: 'o' },
      stdout: { type: 'boolean' },
      'window-s': { type: 'string' },
      'max-iodepth': { type: 'string' },
    },
    'distill-fio',
  );
  const v = parsed.values;
  const problems: string[] = [];
  if (parsed.positionals.length !== 1) problems.push(`distill-fio takes exactly one FILE, got ${parsed.positionals.length}`);
  const file = parsed.positionals[0] ?? '';
  let windowSec: number | undefined;
  if (v['window-s'] !== undefined) {
    windowSec = Number(v['window-s']);
    if (!Number.isFinite(windowSec) || windowSec <= 0) problems.push(`--window-s expects seconds > 0, got '${v['window-s']}'`);
  }
  let maxIodepth = DEFAULT_MAX_IODEPTH;
  if (v['max-iodepth'] !== undefined) {
    maxIodepth = Number(v['max-iodepth']);
    if (!Number.isSafeInteger(maxIodepth) || maxIodepth < 1 || maxIodepth > 65536)
      problems.push(`--max-iodepth expects an integer from 1 to 65536, got '${v['max-iodepth']}'`);
  }
  const toStdout = v.stdout === true;
  if (toStdout && v.output !== undefined) problems.push('give either -o/--output or --stdout, not both');
  const output = toStdout ? undefined : (v.output ?? `fio_traced_${fileStamp(now)}.ini`);
  if (output !== undefined && file !== '') problems.push(...outputProblems(output, '--output', [{ flag: 'FILE', path: file }]));
  if (problems.length > 0) throw new ConfigError(problems);
  return { file, ...(output !== undefined ? { output } : {}), ...(windowSec !== undefined ? { windowSec } : {}), maxIodepth, toStdout };
}

export function distillMain(argv: readonly string[], version: string): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${DISTILL_HELP}\n`);
    return 0;
  }
  let args: ReturnType<typeof parseDistillArgs>;
  let capture: TraceCapture;
  try {
    args = parseDistillArgs(argv, new Date());
    capture = captureFromFile(args.file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`kv-cache distill-fio: error: ${e.message}\n`);
    return 2;
  }
  const job = distillFio({
    capture,
    ...(args.windowSec !== undefined ? { windowSec: args.windowSec } : {}),
    maxIodepth: args.maxIodepth,
    jobName: 'kv-cache-traced',
    about: [`fio job distilled by kvcache-bench ${version} (kv-cache distill-fio) from ${resolve(args.file)}`],
  });
  if (args.output === undefined) {
    process.stdout.write(job.ini);
    return 0;
  }
  try {
    writeFileAtomically(args.output, job.ini);
  } catch (e) {
    process.stderr.write(`kv-cache distill-fio: error: ${args.output} not written: ${messageOf(e)}\n`);
    return 1;
  }
  for (const w of job.warnings) process.stderr.write(`kv-cache distill-fio: warning: ${w}\n`);
  process.stdout.write(
    `fio job saved to ${args.output} (bssplit from ${job.sizeSource}, rwmixread=${job.rwmixread}, iodepth=${job.iodepth})\n`,
  );
  return 0;
}
