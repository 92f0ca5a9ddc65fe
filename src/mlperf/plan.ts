// The sequence of an MLPerf run as exact commands: the shared-dir probe (several hosts), the
// preconditioning, then per option and trial a sleep, the ranks' `kv-cache` command, a sleep, with a
// pause between options. Pure: `--dry-run` prints this plan and the runner executes it, so what is
// printed is what runs.
import { join } from 'node:path';
import { hasControl, inert } from '../util/safe-text.js';
import { datasizeLine, datasizeOf } from './datasize.js';
import { MLPERF_OPTIONS, VALUE_FLAGS } from './options.js';
import type { OptionId, OptionValues } from './options.js';
import type { MlperfRequest } from './request.js';

/** How this machine launches ranks. */
export interface LaunchContext {
  /** The Node.js binary and the kv-cache bootstrap (bin/kv-cache.cjs), by absolute path: the same on every host. */
  readonly node: string;
  readonly bin: string;
  /** CPUs of this host (more ranks per node than this needs --oversubscribe). */
  readonly cores: number;
  readonly isRoot: boolean;
  /** `kvcache_<stamp>`'s stamp, YYYYmmdd_HHMMSS. */
  readonly stamp: string;
}

export type Step =
  | { readonly kind: 'probe'; readonly argv: readonly string[]; readonly dir: string }
  | { readonly kind: 'precondition'; readonly argv: readonly string[]; readonly dir: string }
  | { readonly kind: 'sleep'; readonly seconds: number; readonly why: string }
  | {
      readonly kind: 'trial';
      readonly option: OptionId;
      readonly trial: number;
      readonly argv: readonly string[];
      readonly dir: string;
      readonly values: OptionValues;
    };

export interface Plan {
  readonly runDir: string;
  readonly summaryPath: string;
  readonly steps: readonly Step[];
  readonly totalRanks: number;
  readonly hostCount: number;
  /** True when ranks are launched with mpirun (more than one rank or host). */
  readonly usesMpirun: boolean;
}

/** The option's values with the OPEN overrides the user gave (only those). */
export function effectiveValues(id: OptionId, overrides: Partial<OptionValues>): OptionValues {
  return { ...MLPERF_OPTIONS[id].values, ...overrides };
}

/** `mpirun …` for `ranksPerHost` ranks on each host, or nothing when one rank runs alone. */
export function launcherArgv(r: MlperfRequest, ctx: LaunchContext, ranksPerHost: number, hostCount: number): string[] {
  const total = ranksPerHost * hostCount;
  if (total <= 1 && r.hosts.length <= 1 && r.mpiParams.length === 0) return [];
  const argv = ['mpirun'];
  if (ctx.isRoot) argv.push('--allow-run-as-root');
  if (ranksPerHost > ctx.cores) argv.push('--oversubscribe');
  argv.push('-np', String(total));
  if (r.hosts.length > 0) argv.push('--host', r.hosts.map((h) => `${h}:${ranksPerHost}`).join(','), '--npernode', String(ranksPerHost));
  argv.push(...r.mpiParams);
  return argv;
}

function valueArgs(v: OptionValues): string[] {
  return (Object.keys(VALUE_FLAGS) as Array<keyof OptionValues>).flatMap((k) => [`--${VALUE_FLAGS[k]}`, String(v[k])]);
}

export function planSequence(r: MlperfRequest, ctx: LaunchContext): Plan {
  const runDir = join(r.resultsDir, `kvcache_${ctx.stamp}`);
  const hostCount = Math.max(1, r.hosts.length);
  const launcher = launcherArgv(r, ctx, r.npernode, hostCount);
  const onePerHost = launcherArgv(r, ctx, 1, hostCount);
  const kvCache = [ctx.node, ctx.bin];
  // Each rank's directory under --cache-dir; none with --storage-backend s3, whose ranks keep their objects under rank_<N>/ of the prefix.
  const cacheBase = r.cacheDir !== '' ? ['--rank-cache-base', r.cacheDir] : [];
  const common = [
    '--barrier-timeout',
    String(r.barrierTimeoutSec),
    '--no-progress',
    ...(r.config !== undefined ? ['--config', r.config] : []),
    ...r.storageArgs,
  ];
  const steps: Step[] = [];
  if (r.hosts.length > 1) {
    const dir = join(runDir, 'probe');
    steps.push({ kind: 'probe', dir, argv: [...onePerHost, ...kvCache, 'mlperf', '--probe-dir', dir, '--barrier-timeout', '30'] });
  }
  if (!r.skipPrecondition) {
    const first = effectiveValues(r.options[0] ?? 1, r.overrides);
    const dir = join(runDir, 'precondition');
    steps.push({
      kind: 'precondition',
      dir,
      argv: [
        ...onePerHost,
        ...kvCache,
        ...['--model', first.model, '--precondition', '--num-users', '1', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0'],
        ...['--generation-mode', 'none', '--duration', '86400', '--max-requests', '1', '--seed-base', String(r.seed)],
        ...(r.preconditionSizeGb !== undefined ? ['--precondition-size-gb', String(r.preconditionSizeGb)] : []),
        ...['--rank-output-base', dir, ...cacheBase, ...common],
      ],
    });
  }
  r.options.forEach((id, i) => {
    if (i > 0 && r.interOptionDelaySec > 0)
      steps.push({ kind: 'sleep', seconds: r.interOptionDelaySec, why: `between option ${r.options[i - 1]} and ${id}` });
    const values = effectiveValues(id, r.overrides);
    for (let t = 1; t <= r.trials; t++) {
      const dir = join(runDir, `option_${id}`, `trial_${t}`);
      if (r.startDelaySec > 0) steps.push({ kind: 'sleep', seconds: r.startDelaySec, why: `before option ${id} trial ${t}` });
      steps.push({
        kind: 'trial',
        option: id,
        trial: t,
        dir,
        values,
        argv: [
          ...launcher,
          ...kvCache,
          ...valueArgs(values),
          ...['--seed-base', String(r.seed), '--rank-output-base', dir, ...cacheBase, ...common],
          ...r.poolArgs,
        ],
      });
      if (r.endDelaySec > 0) steps.push({ kind: 'sleep', seconds: r.endDelaySec, why: `after option ${id} trial ${t}` });
    }
  });
  return {
    runDir,
    summaryPath: join(runDir, `kvcache_run_summary_${ctx.stamp}.json`),
    steps,
    totalRanks: r.numProcesses,
    hostCount,
    usesMpirun: launcher.length > 0,
  };
}

/** One character inside bash's $'…': backslash and quote escaped, control characters as \xHH / \uHHHH. */
function ansiCQuoted(ch: string): string {
  if (ch === '\\' || ch === "'") return `\\${ch}`;
  if (!hasControl(ch)) return ch;
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * One argument quoted for a POSIX shell (only when it needs it). An argument holding a control
 * character (a results dir named `res\nid #`) is written as bash's $'…' with the character escaped,
 * so that every printed line stays one line: pasted, it can never become a command of its own.
 */
export function shellQuote(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  if (hasControl(arg)) return `$'${arg.replace(/[\s\S]/gu, ansiCQuoted)}'`;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The plan as a shell script's lines: what `--dry-run` prints. */
export function planLines(p: Plan): string[] {
  const lines = [`# run directory: ${inert(p.runDir)}`, `# ranks: ${p.totalRanks} on ${p.hostCount} host(s)`];
  for (const s of p.steps) {
    if (s.kind === 'sleep') lines.push(`sleep ${s.seconds}  # ${s.why}`);
    else {
      const what = s.kind === 'trial' ? `option ${s.option} (${MLPERF_OPTIONS[s.option].name}) trial ${s.trial}` : s.kind;
      lines.push(`# ${what}`);
      const size = s.kind === 'trial' && s.trial === 1 ? datasizeOf(s.values.model, s.values.numUsers, p.totalRanks) : undefined;
      if (size !== undefined) lines.push(datasizeLine(size));
      lines.push(s.argv.map(shellQuote).join(' '));
    }
  }
  lines.push(`# merge: kv-cache merge ${shellQuote(p.runDir)} --output ${shellQuote(p.summaryPath)}`);
  return lines;
}
