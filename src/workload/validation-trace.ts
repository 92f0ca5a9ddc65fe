// --validation-trace: a JSON list of request records from a real inference server (the reference's
// RealTraceEntry: timestamp, request and user ids, context and generation tokens, phase, cache hit,
// tier, read and write bytes and latencies, model), reduced to the figures a run is compared with.
// Unlike the reference, which compared against hard-coded "synthetic" numbers when the file was missing
// or unreadable, a missing or malformed file is an input error naming the file and the problem.
import { statSync } from 'node:fs';
import { readInputText } from '../util/input-file.js';
import * as z from 'zod';

/** Larger files are refused: the whole list is parsed in memory. */
export const MAX_VALIDATION_TRACE_BYTES = 256 * 1024 * 1024;

const VALID_SHAPE =
  'A valid file is a JSON array of records such as {"timestamp": 0.5, "request_id": "r1", "user_id": "u1", ' +
  '"context_tokens": 2048, "generation_tokens": 128, "phase": "prefill", "cache_hit": false, "cache_tier": "storage", ' +
  '"read_bytes": 0, "write_bytes": 268435456, "read_latency_ms": 0, "write_latency_ms": 41.5, "model_name": "llama3.1-8b"}';

export class ValidationTraceError extends Error {
  constructor(
    readonly path: string,
    problem: string,
    hint = VALID_SHAPE,
  ) {
    super(`validation trace '${path}': ${problem}. ${hint}`);
    this.name = 'ValidationTraceError';
  }
}

const count = z.number().int().min(0);
const record = z.object({
  timestamp: z.number(),
  request_id: z.string(),
  user_id: z.string(),
  context_tokens: count,
  generation_tokens: count,
  phase: z.string(),
  cache_hit: z.boolean(),
  cache_tier: z.string(),
  read_bytes: count,
  write_bytes: count,
  read_latency_ms: z.number().min(0),
  write_latency_ms: z.number().min(0),
  model_name: z.string(),
  conversation_id: z.string().nullable().optional(),
  turn_number: z.number().int().nullable().optional(),
  prefix_cached: z.boolean().optional(),
});

export type ValidationTraceRecord = z.output<typeof record>;

/** A distribution of token counts: mean and nearest-rank percentiles. */
export interface TokenDistribution {
  readonly mean: number;
  readonly p50: number;
  readonly p95: number;
}

/** What a run is compared with (the reference's trace_stats, plus bytes per request and the context distribution). */
export interface ValidationTraceStats {
  readonly totalRequests: number;
  readonly cacheHitRate: number;
  readonly readBytes: number;
  readonly writeBytes: number;
  /** read ÷ write bytes (write counted as at least 1, as the reference). */
  readonly readWriteRatio: number;
  readonly bytesPerRequest: number;
  readonly contextTokens: TokenDistribution;
  readonly generationTokensMean: number;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? 0;
}

export function tokenDistribution(values: readonly number[]): TokenDistribution {
  if (values.length === 0) return { mean: 0, p50: 0, p95: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

export function traceStats(records: readonly ValidationTraceRecord[]): ValidationTraceStats {
  const n = records.length;
  let hits = 0;
  let readBytes = 0;
  let writeBytes = 0;
  let generation = 0;
  for (const r of records) {
    if (r.cache_hit) hits += 1;
    readBytes += r.read_bytes;
    writeBytes += r.write_bytes;
    generation += r.generation_tokens;
  }
  return {
    totalRequests: n,
    cacheHitRate: hits / n,
    readBytes,
    writeBytes,
    readWriteRatio: readBytes / Math.max(writeBytes, 1),
    bytesPerRequest: (readBytes + writeBytes) / n,
    contextTokens: tokenDistribution(records.map((r) => r.context_tokens)),
    generationTokensMean: generation / n,
  };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const [index, field] = issue.path;
  const where = typeof index === 'number' ? `record ${index}${field !== undefined ? ` field '${String(field)}'` : ''}` : 'the top level';
  if (issue.code === 'invalid_type' && typeof index === 'number' && field !== undefined && issue.message.includes('undefined')) {
    return `${where} is missing`;
  }
  return `${where}: ${issue.message}`;
}

/** Records of a JSON text; throws ValidationTraceError naming the first few problems. */
export function parseValidationTrace(text: string, path: string): ValidationTraceRecord[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ValidationTraceError(path, `not valid JSON (${e instanceof Error ? e.message.slice(0, 200) : 'parse error'})`);
  }
  const parsed = z.array(record).safeParse(data);
  if (!parsed.success) {
    const shown = parsed.error.issues.slice(0, 5).map(describeIssue);
    const more = parsed.error.issues.length > shown.length ? ` (and ${parsed.error.issues.length - shown.length} more)` : '';
    throw new ValidationTraceError(path, `${shown.join('; ')}${more}`);
  }
  if (parsed.data.length === 0) throw new ValidationTraceError(path, 'the list holds no records');
  return parsed.data;
}

/** Reads and checks the file (a regular file, checked before it is opened, so a FIFO never blocks). */
export function loadValidationTrace(path: string): ValidationTraceStats {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new ValidationTraceError(path, st.isDirectory() ? 'is a directory' : 'is not a regular file');
    size = st.size;
  } catch (e) {
    if (e instanceof ValidationTraceError) throw e;
    const code = e instanceof Error && 'code' in e ? String(e.code) : '';
    throw new ValidationTraceError(path, code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : 'cannot be read');
  }
  if (size > MAX_VALIDATION_TRACE_BYTES) {
    throw new ValidationTraceError(
      path,
      `is ${size} bytes; at most ${MAX_VALIDATION_TRACE_BYTES} bytes (256 MiB) are accepted`,
      'Pass a sample of the trace',
    );
  }
  // What is opened is judged again (non-blocking open, fstat, the size cap): the path may have changed since the stat.
  // It is read to its end within the cap: a file whose size stat gives as 0 may hold data (procfs).
  const read = readInputText(path, { maxBytes: MAX_VALIDATION_TRACE_BYTES });
  if (!read.ok) throw new ValidationTraceError(path, read.problem);
  return traceStats(parseValidationTrace(read.text, path));
}
