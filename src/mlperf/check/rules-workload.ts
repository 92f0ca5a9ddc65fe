// The CLOSED locks of Rules.md §6, judged from what each rank actually ran (its effective_config.args)
// and from run.json: the Option's fixed values (6.3.1.1), seed / trials / inter-option delay / no
// config (6.3.2.1), no autoscaling (6.3.2.2), and nothing else changed (6.6.1).
import { FLAG_ROWS } from '../../settings/flags.js';
import { CLOSED_DEFAULTS, MLPERF_OPTIONS, OPTION_IDS, VALUE_FLAGS } from '../options.js';
import type { OptionId, OptionValues } from '../options.js';
import { argOf, evidence, manifestEvidence, rankEvidence, ranksOf, verdictOf } from './facts.js';
import type { Finding } from './facts.js';
import type { CheckInput, RankInput, Rule, Verdict } from './types.js';

/** The args key of an option value (`num-users` → `num_users`). */
const argKey = (k: keyof OptionValues): string => VALUE_FLAGS[k].replaceAll('-', '_');
const VALUE_KEYS = Object.keys(VALUE_FLAGS) as Array<keyof OptionValues>;

/** The Option a rank file belongs to: its option_<k> directory, else (one results file) the Option whose values it ran. */
export function optionOfRank(r: RankInput): OptionId | undefined {
  const byDir = OPTION_IDS.find((id) => String(id) === r.option);
  if (byDir !== undefined) return byDir;
  return OPTION_IDS.find((id) => VALUE_KEYS.every((k) => argOf(r.doc, argKey(k)) === MLPERF_OPTIONS[id].values[k]));
}

function fixedWorkload(input: CheckInput): Verdict {
  const findings: Finding[] = [];
  const ranks = ranksOf(input);
  for (const r of ranks) {
    const id = optionOfRank(r);
    if (id === undefined) {
      findings.push({
        status: 'FAIL',
        evidence: rankEvidence(
          input,
          r,
          'option',
          r.option,
          'one of Options 1, 2, 3 of Table KVCache-1 (directory option_<k>, or its values)',
        ),
      });
      continue;
    }
    const want = MLPERF_OPTIONS[id].values;
    const wrong = VALUE_KEYS.filter((k) => argOf(r.doc, argKey(k)) !== want[k]);
    for (const k of wrong)
      findings.push({
        status: 'FAIL',
        evidence: rankEvidence(input, r, `effective_config.args.${argKey(k)}`, argOf(r.doc, argKey(k)), `${want[k]} (Option ${id})`),
      });
  }
  // Passes are summarised per option: seven values × every rank would bury the failures.
  for (const id of OPTION_IDS) {
    const mine = ranks.filter((r) => optionOfRank(r) === id);
    if (mine.length === 0) continue;
    const ok = mine.filter((r) => VALUE_KEYS.every((k) => argOf(r.doc, argKey(k)) === MLPERF_OPTIONS[id].values[k]));
    if (ok.length > 0) {
      const v = MLPERF_OPTIONS[id].values;
      findings.push({
        status: 'PASS',
        evidence: evidence(
          `option_${id}`,
          VALUE_KEYS.map(argKey).join(', '),
          `${ok.length} of ${mine.length} rank file(s) ran ${VALUE_KEYS.map((k) => v[k]).join(', ')}`,
          `Option ${id} (${MLPERF_OPTIONS[id].name})`,
        ),
      });
    }
  }
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'at least one rank file per Option run'));
}

/** The seed each rank must have run with: the base plus its rank (the rank rule, cli/rank-flags.ts). */
function seedFindings(input: CheckInput, ranks: readonly RankInput[]): Finding[] {
  const wrong = ranks.filter((r) => r.doc.seed !== CLOSED_DEFAULTS.seed + r.rank);
  const found: Finding[] = wrong.map((r) => ({
    status: 'FAIL',
    evidence: rankEvidence(input, r, 'seed', r.doc.seed, `${CLOSED_DEFAULTS.seed} + rank ${r.rank} = ${CLOSED_DEFAULTS.seed + r.rank}`),
  }));
  if (ranks.length > wrong.length)
    found.push({
      status: 'PASS',
      evidence: evidence('.', 'seed', `${ranks.length - wrong.length} rank file(s) ran seed 42 + rank`, `${CLOSED_DEFAULTS.seed} + rank`),
    });
  return found;
}

function trialFindings(input: CheckInput): Finding[] {
  const want = CLOSED_DEFAULTS.trials;
  const found: Finding[] = [];
  const perOption = new Map<string, number>();
  for (const t of input.trials) perOption.set(t.option, (perOption.get(t.option) ?? 0) + 1);
  for (const [option, n] of perOption)
    found.push({ status: n === want ? 'PASS' : 'FAIL', evidence: evidence(`option_${option}`, 'trial directories', n, `${want}`) });
  const recorded = input.manifest?.fields.trials_per_option;
  if (input.manifest !== undefined)
    found.push({
      status: recorded === undefined ? 'CANNOT TELL' : recorded === want ? 'PASS' : 'FAIL',
      evidence: manifestEvidence(input, 'trials_per_option', recorded, `${want}`),
    });
  return found;
}

/** The inter-option delay: the rules say 90 s (6.3.2.1) and 20 s (6.6.1, upstream's code); the recorded value is judged against both. */
export const DELAY_TEXTS = { rule: 90, closedImmutable: 20 } as const;

export function delayFinding(input: CheckInput): Finding {
  const seq = input.manifest?.fields.sequence;
  const v = seq?.inter_option_delay_sec;
  const required = `${DELAY_TEXTS.rule} s (6.3.2.1) or ${DELAY_TEXTS.closedImmutable} s (6.6.1 and upstream's code): the rules text contradicts itself`;
  if (v === undefined)
    return { status: 'CANNOT TELL', evidence: manifestEvidence(input, 'sequence.inter_option_delay_sec', undefined, required) };
  const satisfies =
    v === DELAY_TEXTS.rule
      ? `${v} s: satisfies 6.3.2.1 (90 s), not 6.6.1 / upstream's code (20 s)`
      : v === DELAY_TEXTS.closedImmutable
        ? `${v} s: satisfies 6.6.1 / upstream's code (20 s), not 6.3.2.1 (90 s)`
        : `${v} s: satisfies neither text`;
  return {
    status: v === DELAY_TEXTS.rule || v === DELAY_TEXTS.closedImmutable ? 'PASS' : 'FAIL',
    evidence: manifestEvidence(input, 'sequence.inter_option_delay_sec', satisfies, required),
  };
}

function configFindings(input: CheckInput, ranks: readonly RankInput[]): Finding[] {
  const found: Finding[] = ranks
    .filter((r) => argOf(r.doc, 'config') !== null)
    .map((r) => ({
      status: 'FAIL',
      evidence: rankEvidence(input, r, 'effective_config.args.config', argOf(r.doc, 'config'), 'null (no --config)'),
    }));
  if (found.length < ranks.length)
    found.push({
      status: 'PASS',
      evidence: evidence('.', 'effective_config.args.config', `null in ${ranks.length - found.length} rank file(s)`, 'null (no --config)'),
    });
  const seq = input.manifest?.fields.sequence;
  if (seq?.config !== undefined)
    found.push({
      status: seq.config === null ? 'PASS' : 'FAIL',
      evidence: manifestEvidence(input, 'sequence.config', seq.config, 'null (no --config)'),
    });
  return found;
}

function sequenceLocks(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  const findings = [...seedFindings(input, ranks), ...(input.kind === 'run' ? trialFindings(input) : []), ...configFindings(input, ranks)];
  if (input.kind === 'run') findings.push(delayFinding(input));
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files recording seed and config'));
}

function autoscaling(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  const on = ranks.filter((r) => argOf(r.doc, 'enable_autoscaling') !== false);
  const findings: Finding[] = on.map((r) => ({
    status: argOf(r.doc, 'enable_autoscaling') === undefined ? 'CANNOT TELL' : 'FAIL',
    evidence: rankEvidence(input, r, 'effective_config.args.enable_autoscaling', argOf(r.doc, 'enable_autoscaling'), 'false'),
  }));
  if (on.length < ranks.length)
    findings.push({
      status: 'PASS',
      evidence: evidence('.', 'effective_config.args.enable_autoscaling', `false in ${ranks.length - on.length} rank file(s)`, 'false'),
    });
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files recording enable_autoscaling'));
}

/**
 * Flags CLOSED may vary, or that other rules judge: the directories and rank plumbing the sequence
 * passes (6.6.1: cache dir, results dir, client topology), the option values (6.3.1.1), seed and
 * config (6.3.2.1), autoscaling (6.3.2.2).
 */
const VARIABLE_IN_CLOSED = new Set([
  'cache_dir',
  'create_cache_dir',
  'output',
  'rank_output_base',
  'rank_cache_base',
  'barrier_dir',
  'barrier_timeout',
  'world_size',
  'no_progress',
  'seed',
  'seed_base',
  'seed_given',
  'config',
  'enable_autoscaling',
  ...VALUE_KEYS.map(argKey),
]);

/** Every other flag's default, as the flag table declares it (flags whose default is made at start-up are left out). */
function fixedDefaults(): Array<[string, unknown]> {
  return FLAG_ROWS.filter((f) => f.defaultAt === undefined)
    .map((f): [string, unknown] => [f.name.replaceAll('-', '_'), f.default ?? null])
    .filter(([k]) => !VARIABLE_IN_CLOSED.has(k));
}

function closedImmutable(input: CheckInput): Verdict {
  const ranks = ranksOf(input);
  const defaults = fixedDefaults();
  const findings: Finding[] = [];
  let clean = 0;
  for (const r of ranks) {
    const changed = defaults.filter(([k, def]) => argOf(r.doc, k) !== undefined && JSON.stringify(argOf(r.doc, k)) !== JSON.stringify(def));
    for (const [k, def] of changed)
      findings.push({
        status: 'FAIL',
        evidence: rankEvidence(input, r, `effective_config.args.${k}`, argOf(r.doc, k), `${JSON.stringify(def)} (the default)`),
      });
    if (changed.length === 0) clean++;
  }
  if (clean > 0)
    findings.push({
      status: 'PASS',
      evidence: evidence('.', 'effective_config.args', `${clean} rank file(s) ran every other flag at its default`, 'defaults'),
    });
  const seq = input.manifest?.fields.sequence;
  if (input.kind === 'run') {
    const want: Array<[string, unknown, unknown]> = [
      ['start_delay_sec', seq?.start_delay_sec, CLOSED_DEFAULTS.startDelaySec],
      ['end_delay_sec', seq?.end_delay_sec, CLOSED_DEFAULTS.endDelaySec],
      ['preconditioned', seq?.preconditioned, true],
    ];
    for (const [field, got, req] of want)
      findings.push({
        status: got === undefined ? 'CANNOT TELL' : got === req ? 'PASS' : 'FAIL',
        evidence: manifestEvidence(input, `sequence.${field}`, got, String(req)),
      });
    const overrides = seq?.overrides;
    findings.push({
      status: overrides === undefined ? 'CANNOT TELL' : Object.keys(overrides).length === 0 ? 'PASS' : 'FAIL',
      evidence: manifestEvidence(input, 'sequence.overrides', overrides, '{} (no option value overridden)'),
    });
  }
  return verdictOf(findings, evidence('.', 'rank files', 'none', 'rank files recording their flags'));
}

export const WORKLOAD_RULES: readonly Rule[] = [
  {
    id: '6.3.1.1',
    name: 'kvcacheFixedWorkloadPerOption',
    appliesTo: ['closed'],
    requirement:
      "each rank ran its Option's model, num-users, duration, gpu-mem-gb, cpu-mem-gb, max-concurrent-allocs, generation-mode (Table KVCache-1)",
    evaluate: fixedWorkload,
  },
  {
    id: '6.3.2.1',
    name: 'kvcacheClosedSequenceLocks',
    appliesTo: ['closed'],
    requirement: 'seed 42 (+ rank), 3 trials per Option, inter-option delay 90 s (6.3.2.1) or 20 s (6.6.1), no --config',
    evaluate: sequenceLocks,
  },
  {
    id: '6.3.2.2',
    name: 'kvcacheAutoscalingProhibited',
    appliesTo: ['closed'],
    requirement: 'no rank ran with --enable-autoscaling',
    evaluate: autoscaling,
  },
  {
    id: '6.6.1',
    name: 'kvcacheClosedImmutable',
    appliesTo: ['closed'],
    requirement:
      'nothing but system name, cache dir, results dir and client topology varied: every other flag at its default, 90 s delays, preconditioning, no overrides',
    evaluate: closedImmutable,
  },
];
