// The flag table: spelling, kind, group and help of every `kv-cache run` flag (spec §9.1 plus our
// additive ones). The argv parser, the help text and the "did you mean" hints all read this one table.
import { AUTOSCALER_MODES, FLAG_DEFAULTS, GENERATION_MODES, IO_MODES, LOG_LEVELS, PERFORMANCE_PROFILES, TOKENIZERS } from '../engine/run-config.js';
import type { RunFlags } from '../engine/run-config.js';

export type FlagKind = 'int' | 'float' | 'string' | 'choice' | 'bool';

export const FLAG_GROUPS = ['Workload', 'Tiers and capacity', 'Workload sources', 'Run control', 'Output', 'Modes and advanced'] as const;
export type FlagGroup = (typeof FLAG_GROUPS)[number];

export interface FlagSpec {
  /** Without the leading dashes, e.g. 'num-users'. */
  readonly name: string;
  /** The RunFlags field it sets. */
  readonly field: keyof RunFlags;
  readonly kind: FlagKind;
  readonly group: FlagGroup;
  readonly help: string;
  readonly choices?: readonly string[];
  /** Placeholder of the value in the help text (N, X, or this). */
  readonly metavar?: string;
  /** Shown as "(default: …)"; derived from FLAG_DEFAULTS when absent. */
  readonly defaultText?: string;
}

function flag(name: string, field: keyof RunFlags, kind: FlagKind, group: FlagGroup, help: string, extra: Partial<FlagSpec> = {}): FlagSpec {
  return { name, field, kind, group, help, ...extra };
}

const W: FlagGroup = 'Workload';
const T: FlagGroup = 'Tiers and capacity';
const S: FlagGroup = 'Workload sources';
const R: FlagGroup = 'Run control';
const O: FlagGroup = 'Output';
const M: FlagGroup = 'Modes and advanced';

export const FLAGS: readonly FlagSpec[] = [
  flag('model', 'model', 'string', W, 'Model key from the model table (built-ins plus config-file model_configs)', { metavar: 'KEY' }),
  flag('num-users', 'numUsers', 'int', W, 'Number of simulated users (1 … validation_limits.max_users)'),
  flag('generation-mode', 'generationMode', 'choice', W, 'Simulated per-token generation time: none 0 ms, fast 2 ms, realistic 30 ms', { choices: GENERATION_MODES }),
  flag('disable-multi-turn', 'disableMultiTurn', 'bool', W, 'Do not reuse previous conversation turns'),
  flag('disable-prefix-caching', 'disablePrefixCaching', 'bool', W, 'Disable shared-prefix (system prompt) caching'),
  flag('enable-rag', 'enableRag', 'bool', W, 'Add retrieval-augmented (RAG) document reads'),
  flag('rag-num-docs', 'ragNumDocs', 'int', W, 'Number of RAG documents to ingest (>= 0)'),

  flag('gpu-mem-gb', 'gpuMemGb', 'float', T, 'GPU tier capacity per GPU in GiB (0 disables the tier)'),
  flag('num-gpus', 'numGpus', 'int', T, 'Number of GPUs (>= 1); GPU capacity = gpu-mem-gb × num-gpus'),
  flag('tensor-parallel', 'tensorParallel', 'int', T, 'Tensor-parallel degree (1 … num-gpus; entries are divided by it)'),
  flag('gpu-bandwidth-gbs', 'gpuBandwidthGbs', 'float', T, 'Bandwidth of the simulated GPU tier in GB/s'),
  flag('cpu-mem-gb', 'cpuMemGb', 'float', T, 'CPU (DRAM) tier capacity in GiB (0 disables the tier)'),
  flag('cache-dir', 'cacheDir', 'string', T, 'Directory of the storage tier (created if absent; only files this run writes are ever deleted)', { defaultText: 'a new temporary directory', metavar: 'DIR' }),
  flag('storage-capacity-gb', 'storageCapacityGb', 'float', T, 'Storage tier capacity in GiB (0 = 95% of the free space)'),
  flag('max-concurrent-allocs', 'maxConcurrentAllocs', 'int', T, 'Bound on concurrent allocations (0 = unlimited)'),
  flag('io-mode', 'ioMode', 'choice', T, 'Storage tier file I/O: direct = O_DIRECT, reads never served by the page cache; buffered = as the reference', { choices: IO_MODES }),

  flag('dataset-path', 'datasetPath', 'string', S, 'ShareGPT JSON file to replay instead of synthetic users', { defaultText: 'none', metavar: 'FILE' }),
  flag('max-conversations', 'maxConversations', 'int', S, 'Conversations to load from the ShareGPT file (> 0)'),
  flag('request-rate', 'requestRate', 'float', S, 'ShareGPT requests per second (0 = as fast as possible)'),
  flag('use-burst-trace', 'useBurstTrace', 'bool', S, 'Replay a BurstGPT trace instead of synthetic users'),
  flag('burst-trace-path', 'burstTracePath', 'string', S, 'BurstGPT CSV file, directory or glob', { metavar: 'PATH' }),
  flag('trace-speedup', 'traceSpeedup', 'float', S, 'BurstGPT replay speed-up (0 = no pacing delays)'),
  flag('replay-cycles', 'replayCycles', 'int', S, 'BurstGPT replay cycles (0 = until the duration ends)'),
  flag('validation-trace', 'validationTrace', 'string', S, 'JSON trace whose cache hit rate the run is compared with [not implemented yet]', { defaultText: 'none', metavar: 'FILE' }),

  flag('duration', 'durationSec', 'int', R, 'Measured run length in seconds (1 … validation_limits.max_duration_seconds)'),
  flag('max-requests', 'maxRequests', 'int', R, 'Stop after this many completed requests (0 = no limit)'),
  flag('seed', 'seed', 'int', R, 'Seed of every random stream', { defaultText: 'random, chosen at startup and recorded' }),
  flag('precondition', 'precondition', 'bool', R, 'Fill the storage tier before measuring'),
  flag('precondition-size-gb', 'preconditionSizeGb', 'float', R, 'Bytes to write when preconditioning, in GiB (0 = 2 × storage capacity)'),
  flag('precondition-threads', 'preconditionThreads', 'int', R, 'Preconditioning writers (0 = CPU count)'),
  flag('config', 'config', 'string', R, 'YAML file with workload settings and extra models', { defaultText: 'none: built-in defaults', metavar: 'FILE' }),

  flag('output', 'output', 'string', O, 'Results JSON file', { metavar: 'FILE', defaultText: 'benchmark_results_<YYYYmmdd_HHMMSS>.json' }),
  flag('xlsx-output', 'xlsxOutput', 'string', O, 'Also write a one-row XLSX (or CSV) summary here', { defaultText: 'none', metavar: 'FILE' }),
  flag('performance-profile', 'performanceProfile', 'choice', O, 'Criteria of the storage health verdict', { choices: PERFORMANCE_PROFILES }),
  flag('keep-latency-samples', 'keepLatencySamples', 'bool', O, 'Also dump every raw per-request latency into the JSON (memory grows with the run)'),
  flag('no-progress', 'noProgress', 'bool', O, 'Do not print progress lines during the run'),
  flag('log-level', 'logLevel', 'choice', O, 'Logging verbosity', { choices: LOG_LEVELS }),

  flag('prefill-only', 'prefillOnly', 'bool', M, 'Disaggregated prefill node: writes only (excludes --decode-only)'),
  flag('decode-only', 'decodeOnly', 'bool', M, 'Disaggregated decode node: reads only (excludes --prefill-only)'),
  flag('enable-autoscaling', 'enableAutoscaling', 'bool', M, 'Adjust the number of active users during the run (qos: hold storage saturation at the target; capacity: find the peak)'),
  flag('autoscaler-mode', 'autoscalerMode', 'choice', M, 'Autoscaler goal', { choices: AUTOSCALER_MODES }),
  flag('target-saturation', 'targetSaturation', 'float', M, 'Storage saturation the QoS autoscaler aims for (0.0 … 1.0)'),
  flag('tokenizer', 'tokenizer', 'choice', S, 'Token counts of ShareGPT text: a real cl100k_base tokenizer, or characters ÷ sharegpt.chars_per_token_estimate', { choices: TOKENIZERS }),
  flag('autoscale-interval', 'autoscaleIntervalSec', 'float', M, 'Seconds between autoscaler samples (the reference: 10)'),
  flag('io-trace-log', 'ioTraceLog', 'string', M, 'Trace mode: no real I/O; log every tier operation (incl. deletions) to this CSV (.zst: compressed)', { defaultText: 'none', metavar: 'FILE' }),
  flag('enable-latency-tracing', 'enableLatencyTracing', 'bool', M, 'Trace block-layer latencies with bpftrace (needs root) [not implemented yet]'),
];

const BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

export function flagByName(name: string): FlagSpec | undefined {
  return BY_NAME.get(name);
}

function defaultText(f: FlagSpec): string {
  if (f.defaultText !== undefined) return f.defaultText;
  const defaults: Readonly<Partial<Record<keyof RunFlags, unknown>>> = FLAG_DEFAULTS;
  const d = defaults[f.field];
  if (f.kind === 'bool') return d === true ? 'on' : 'off';
  if (typeof d === 'number' && f.kind === 'float') return Number.isInteger(d) ? d.toFixed(1) : String(d);
  return String(d);
}

function metavar(f: FlagSpec): string {
  if (f.kind === 'bool') return '';
  if (f.choices !== undefined) return ` {${f.choices.join(',')}}`;
  return f.kind === 'int' ? ' N' : f.kind === 'float' ? ' X' : ` ${f.metavar ?? 'VALUE'}`;
}

function wrap(text: string, width: number, indent: string): string {
  const words = text.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line !== '' && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line === '' ? w : `${line} ${w}`;
  }
  if (line !== '') lines.push(line);
  return lines.join(`\n${indent}`);
}

const HELP_WIDTH = 100;

function helpLine(head: string, text: string, indent: string): string {
  const body = wrap(text, HELP_WIDTH - indent.length, indent);
  return head.length < indent.length - 1 ? `${head.padEnd(indent.length)}${body}` : `${head}\n${indent}${body}`;
}

/** `kv-cache run --help`: flags grouped by purpose, each with its default. */
export function helpText(): string {
  const out: string[] = [
    'Usage: kv-cache [run] [options]',
    '',
    'Measures whether a storage device can serve as the KV-cache offload tier of an LLM inference server.',
  ];
  const indent = ' '.repeat(36);
  for (const group of FLAG_GROUPS) {
    out.push('', `${group}:`);
    for (const f of FLAGS.filter((x) => x.group === group)) {
      out.push(helpLine(`  --${f.name}${metavar(f)}`, `${f.help} (default: ${defaultText(f)})`, indent));
    }
  }
  out.push('', helpLine('  -h, --help', 'Show this help and exit', indent));
  return `${out.join('\n')}\n`;
}
