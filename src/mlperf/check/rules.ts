// The rule table of `kv-cache check`: Rules.md §6's KV-cache rules in their order, then ours (KB.n).
// A new rule is one row in a group file. runCheck applies each row's scope first (NOT APPLICABLE with
// the reason, or CANNOT TELL when the scope itself cannot be decided), then its evaluate.
// Upstream's KV-cache submission checker is a stub (no violations ever) and its run checker reads the
// CLI values, which in CLOSED are the defaults, not the per-Option values that ran: these rules read
// each rank's recorded effective_config instead.
import { FIGURE_RULES } from './rules-figures.js';
import { LAYOUT_RULES } from './rules-layout.js';
import { WORKLOAD_RULES } from './rules-workload.js';
import { evidence, hostsOf, manifestEvidence, ranksOf, worst } from './facts.js';
import type { CheckInput, Evidence, Rule, Scope, Status, Verdict } from './types.js';

export const RULES: readonly Rule[] = [...WORKLOAD_RULES, ...LAYOUT_RULES, ...FIGURE_RULES];

/** Why a scope does not hold (NOT APPLICABLE), why it cannot be told (CANNOT TELL), or undefined when it holds. */
function scopeVerdict(scope: Scope, input: CheckInput): Verdict | undefined {
  const ranks = ranksOf(input);
  switch (scope) {
    case 'any':
      return undefined;
    case 'closed':
      if (input.division === 'closed') return undefined;
      return input.division === 'open'
        ? { status: 'NOT APPLICABLE', evidence: [manifestEvidence(input, 'division', 'open', 'closed (a CLOSED-only rule)')] }
        : {
            status: 'CANNOT TELL',
            evidence: [evidence('.', 'division', input.divisionFrom, 'closed or open, to know whether this CLOSED rule applies')],
          };
    case 'run':
      return input.kind === 'run'
        ? undefined
        : {
            status: 'NOT APPLICABLE',
            evidence: [evidence('.', 'input', 'one results file', 'a run directory (run.json, trials, summary)')],
          };
    case 'multi-rank': {
      const most = Math.max(0, input.manifest?.fields.total_ranks ?? 0, ...input.trials.map((t) => t.files.length + t.missing.length));
      return most > 1
        ? undefined
        : { status: 'NOT APPLICABLE', evidence: [evidence('.', 'ranks per trial', most, 'more than one (a multi-client run)')] };
    }
    case 'multi-host': {
      const hosts = Math.max(hostsOf(ranks).length, input.manifest?.fields.host_count ?? 0);
      return hosts > 1
        ? undefined
        : { status: 'NOT APPLICABLE', evidence: [evidence('.', 'hosts', hosts, 'more than one (a multi-host run)')] };
    }
  }
}

export interface RuleResult {
  readonly id: string;
  readonly name: string;
  readonly appliesTo: readonly Scope[];
  readonly status: Status;
  readonly evidence: readonly Evidence[];
}

export interface CheckResult {
  readonly input: CheckInput;
  readonly results: readonly RuleResult[];
  /** FAIL when any rule fails; else CANNOT TELL when one cannot be told; else PASS. */
  readonly verdict: Status;
}

export function runCheck(input: CheckInput, rules: readonly Rule[] = RULES): CheckResult {
  const results = rules.map((rule): RuleResult => {
    const scoped = rule.appliesTo.map((s) => scopeVerdict(s, input)).find((v) => v !== undefined);
    const v = scoped ?? rule.evaluate(input);
    return { id: rule.id, name: rule.name, appliesTo: rule.appliesTo, status: v.status, evidence: v.evidence };
  });
  const statuses = results.map((r) => r.status).filter((s) => s !== 'NOT APPLICABLE');
  return { input, results, verdict: statuses.length === 0 ? 'CANNOT TELL' : worst(statuses) };
}
