// argv → raw flag values, collecting every syntax problem instead of stopping at the first.
// node:util parseArgs (no dependency) does the tokenising in non-strict mode; this module then judges
// each token against the flag table: unknown flags (with a "did you mean"), missing values, values
// given to switches, stray arguments. Typed conversion lives in FlagReader below.
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { FLAG_ROWS as FLAGS, flagByName } from '../settings/flags.js';
import type { FlagRow } from '../settings/flags.js';
import { excerpt } from '../util/excerpt.js';

export interface RawArgs {
  /** Flag name → last value given ('true' for switches). Repeats: the last one wins, as in argparse. */
  readonly values: ReadonlyMap<string, string>;
  readonly problems: readonly string[];
  readonly help: boolean;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length];
}

/** The name a mistyped one most likely meant: a unique prefix match, else the nearest by edit distance. */
export function closestName(name: string, names: readonly string[]): string | undefined {
  const prefixed = names.filter((n) => n.startsWith(name));
  if (name.length >= 3 && prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const n of names) {
    const d = editDistance(name, n);
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  return best;
}

const FLAG_NAMES = FLAGS.map((f) => f.name);

function unknownFlag(rawName: string, name: string): string {
  const hint = closestName(name.replace(/_/g, '-'), FLAG_NAMES);
  return `unknown flag '${excerpt(rawName)}'${hint !== undefined ? ` (did you mean --${hint}?)` : ''}; see --help`;
}

function kindWord(f: Pick<FlagRow<unknown>, 'choices' | 'kind'>): string {
  if (f.choices !== undefined) return `one of ${f.choices.join(', ')}`;
  return f.kind === 'int' ? 'an integer' : f.kind === 'float' ? 'a number' : 'a value';
}

type OptionConfig = NonNullable<ParseArgsConfig['options']>[string];

const PARSE_OPTIONS = Object.fromEntries<OptionConfig>([
  ...FLAGS.map((f) => [f.name, { type: f.kind === 'bool' ? ('boolean' as const) : ('string' as const) }] as const),
  ['help', { type: 'boolean' as const, short: 'h' }] as const,
]);

/** Splits argv into flag values and syntax problems. A leading `run` subcommand is accepted and ignored. */
export function tokenizeArgv(argv: readonly string[]): RawArgs {
  const args = argv[0] === 'run' ? argv.slice(1) : [...argv];
  const { tokens } = parseArgs({ args, options: PARSE_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const values = new Map<string, string>();
  const problems: string[] = [];
  let help = false;
  let skipIndex = -1; // a positional taken to be the value of an unknown flag
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') {
      if (t.index !== skipIndex) problems.push(`unexpected argument '${excerpt(t.value)}' (flags start with --; see --help)`);
      continue;
    }
    if (t.name === 'help') {
      help = true;
      continue;
    }
    const spec = flagByName(t.name);
    if (spec === undefined || !t.rawName.startsWith('--')) {
      problems.push(unknownFlag(t.rawName, t.name));
      if (t.value === undefined) skipIndex = t.index + 1;
      continue;
    }
    if (spec.kind === 'bool') {
      if (t.value !== undefined) problems.push(`--${spec.name} is a switch and takes no value (got '${excerpt(t.value)}')`);
      else values.set(spec.name, 'true');
      continue;
    }
    if (t.value === undefined) problems.push(`--${spec.name} expects ${kindWord(spec)}, but no value was given`);
    else if (!t.inlineValue && t.value.startsWith('--'))
      problems.push(`--${spec.name} expects ${kindWord(spec)}, got the flag '${excerpt(t.value)}'`);
    else values.set(spec.name, t.value);
  }
  return { values, problems, help };
}

/** True when argv asks for help (checked before anything else is judged). */
export function wantsHelp(argv: readonly string[]): boolean {
  return tokenizeArgv(argv).help;
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A decimal integer (surrounding spaces allowed; no hex, exponent or fraction), or undefined. Shared with sub-args.ts. */
export function intOfText(text: string): number | undefined {
  const t = text.trim();
  const n = Number(t);
  return INT.test(t) && Number.isSafeInteger(n) ? n : undefined;
}

/** A finite decimal number (exponent allowed), or undefined. Shared with sub-args.ts. */
export function floatOfText(text: string): number | undefined {
  const t = text.trim();
  const n = Number(t);
  return FLOAT.test(t) && Number.isFinite(n) ? n : undefined;
}

/** Typed reads of raw values; a malformed value is recorded as a problem and the default is used. */
export class FlagReader {
  constructor(
    private readonly raw: RawArgs,
    private readonly problems: string[],
  ) {}

  private get(name: string): string | undefined {
    return this.raw.values.get(name);
  }

  has(name: string): boolean {
    return this.raw.values.has(name);
  }

  int(name: string, def: number): number {
    const v = this.get(name);
    if (v === undefined) return def;
    const n = intOfText(v);
    if (n === undefined) {
      this.problems.push(`--${name} expects an integer, got '${excerpt(v)}'`);
      return def;
    }
    return n;
  }

  float(name: string, def: number): number {
    const v = this.get(name);
    if (v === undefined) return def;
    const n = floatOfText(v);
    if (n === undefined) {
      this.problems.push(`--${name} expects a number, got '${excerpt(v)}'`);
      return def;
    }
    return n;
  }

  bool(name: string): boolean {
    return this.get(name) === 'true';
  }

  str(name: string): string | undefined {
    const v = this.get(name);
    if (v === '') {
      this.problems.push(`--${name} expects a non-empty value`);
      return undefined;
    }
    return v;
  }

  choice<T extends string>(name: string, choices: readonly T[], def: T): T {
    const v = this.get(name);
    if (v === undefined) return def;
    const hit = choices.find((c) => c === v);
    if (hit !== undefined) return hit;
    const folded = choices.find((c) => c.toLowerCase() === v.toLowerCase());
    const hint = folded !== undefined ? ` (did you mean '${folded}'?)` : '';
    this.problems.push(`--${name}: invalid choice '${excerpt(v)}'; valid choices: ${choices.join(', ')}${hint}`);
    return def;
  }
}
