// `kv-cache distill-fio FILE`: the fio job of a traced workload, from a results JSON (ours or the
// reference's: device_latency_tracing's bucket lists) or from saved bpftrace output (what
// `bpftrace` or `kv-cache trace` printed). The upstream tool's options (-o, --stdout, --window-s,
// --max-iodepth) are declared in subcommands.ts. Bad input: one message, exit 2, nothing written.
import { resolve } from 'node:path';
import * as z from 'zod';
import { captureFromOutput } from '../telemetry/capture.js';
import type { TraceCapture } from '../metrics/trace-capture.js';
import { DEFAULT_MAX_IODEPTH, distillFio } from '../telemetry/distill.js';
import type { DistillExtras } from '../telemetry/distill.js';
import type { Bucket } from '../metrics/trace-capture.js';
import { fileStamp } from '../util/dates.js';
import { readInputText } from '../util/input-file.js';
import { GiB } from '../util/units.js';
import { messageOf } from '../util/errors.js';
import { inert } from '../util/safe-text.js';
import { writeFileAtomically } from '../util/files.js';
import { outputProblems } from './cache-dir.js';
import { ConfigError } from './errors.js';
import type { ArgsOf } from './sub-args.js';
import type { DISTILL_ARGS } from './subcommand-args.js';

interface DistillArgs {
  readonly file: string;
  readonly output?: string;
  readonly windowSec?: number;
  readonly maxIodepth: number;
}

const BucketsSchema = z.array(
  z.looseObject({ range_us: z.tuple([z.number(), z.number().nullable()]), count: z.number().int().nonnegative() }),
);
const SizeBucketsSchema = z.array(
  z.looseObject({ range_kib: z.tuple([z.number(), z.number().nullable()]), count: z.number().int().nonnegative() }),
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
          distill_inputs: z
            .looseObject({
              call_sizes: z.looseObject({ read: SizeBucketsSchema, write: SizeBucketsSchema }),
              tool_ops: z
                .looseObject({ reads: z.number().int().nonnegative(), writes: z.number().int().nonnegative(), source: z.string() })
                .nullable(),
              nfs: z.looseObject({ rsize: z.number().int().positive(), wsize: z.number().int().positive() }).nullable(),
            })
            .nullable()
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

/** A capture read back, with the distiller's other inputs when the file kept them (results since 2.10.0). */
interface SavedCapture {
  readonly capture: TraceCapture;
  readonly extras: DistillExtras;
}

/** A results document's capture: its histograms, and its exact totals, window and distiller inputs when it is ours. */
function captureFromResults(json: unknown, file: string): SavedCapture {
  const parsed = ResultsTracingSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.join('.') ?? '';
    throw new ConfigError([
      at === '' || at === 'device_latency_tracing'
        ? `${file}: a JSON file without device_latency_tracing histograms (expected the results of a run with --enable-latency-tracing)`
        : `${file}: ${inert(at)}: ${inert(issue?.message ?? 'not valid')} (expected the results of a run with --enable-latency-tracing)`,
    ]);
  }
  const d = parsed.data;
  const lt = d.kvcache_bench?.latency_tracing;
  const histograms: Record<string, Bucket[]> = {};
  for (const [name, h] of Object.entries(d.device_latency_tracing))
    histograms[name] = h.buckets.map((b) => ({ lo: b.range_us[0], hi: b.range_us[1], count: b.count }));
  const inputs = lt?.distill_inputs ?? null;
  // The run's own call sizes: without them, a run whose bssplit came from its calls would distill to 4k here.
  if (inputs !== null) {
    const buckets = (b: ReadonlyArray<{ range_kib: [number, number | null]; count: number }>): Bucket[] =>
      b.map((x) => ({ lo: x.range_kib[0], hi: x.range_kib[1], count: x.count }));
    histograms.vfs_read_kb = buckets(inputs.call_sizes.read);
    histograms.vfs_write_kb = buckets(inputs.call_sizes.write);
  }
  const extras: DistillExtras = {
    ...(inputs?.tool_ops != null ? { tool: inputs.tool_ops } : {}),
    ...(inputs?.nfs != null ? { nfs: inputs.nfs } : {}),
  };
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
  const capture: TraceCapture = {
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
  return { capture, extras };
}

/** Results files and saved bpftrace output are far smaller; a larger FILE is refused before it is read. */
const MAX_CAPTURE_BYTES = GiB;

/** FILE as a capture: JSON results, else bpftrace text. */
function captureFromFile(file: string): SavedCapture {
  // A FIFO or a device would never end: the shared guard refuses them before reading.
  const read = readInputText(file, { maxBytes: MAX_CAPTURE_BYTES });
  if (!read.ok) throw new ConfigError([`${file}: cannot be read (${read.problem})`]);
  const text = read.text;
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
  return { capture: c, extras: {} };
}

/** The job's settings from the checked arguments (as declared in subcommands.ts); an unusable output throws a ConfigError. */
function distillArgs(input: ArgsOf<typeof DISTILL_ARGS>, now: Date): DistillArgs {
  const v = input.values;
  const file = input.positionals[0];
  const output = v.stdout ? undefined : (v.output ?? `fio_traced_${fileStamp(now)}.ini`);
  if (output !== undefined) {
    const problems = outputProblems(output, '--output', [{ flag: 'FILE', path: file }]);
    if (problems.length > 0) throw new ConfigError(problems);
  }
  return {
    file,
    ...(output !== undefined ? { output } : {}),
    ...(v['window-s'] !== undefined ? { windowSec: v['window-s'] } : {}),
    maxIodepth: v['max-iodepth'] ?? DEFAULT_MAX_IODEPTH,
  };
}

/** A bad FILE or output throws a ConfigError: one message, exit 2, nothing written. */
export function distillMain(input: ArgsOf<typeof DISTILL_ARGS>, version: string): number {
  const args = distillArgs(input, new Date());
  const { capture, extras } = captureFromFile(args.file);
  const job = distillFio({
    capture,
    ...extras,
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
