// A subcommand's arguments from one declaration (its row in subcommands.ts): the strict parse, its
// --help text, its usage line and its error messages all come from the same options and positionals,
// so an option, a short alias or a message means the same thing in every subcommand. Values are
// converted here (numbers with the run's own helpers from parse-argv.ts), never in the modules.
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { excerpt } from '../util/excerpt.js';
import { ConfigError } from './errors.js';
import { helpLine } from './help.js';
import { closestName, floatOfText, intOfText } from './parse-argv.js';

/** The one meaning of each short option, in every subcommand (subcommands.test.ts holds every row to it). */
export const SHORT_OPTIONS: Readonly<Record<string, string>> = { o: 'output', h: 'help' };

interface OptionBase {
  /** One letter; it must mean what SHORT_OPTIONS says. */
  readonly short?: string;
  readonly help: string;
  /** Shown in the usage line (`[--json]`); required options always are. */
  readonly inUsage?: boolean;
  /** Left out of --help: an option one kv-cache passes to another, not for users. */
  readonly hidden?: boolean;
}

/** A switch: true when given. */
export interface BoolOption extends OptionBase {
  readonly kind: 'bool';
}

interface ValueOptionBase extends OptionBase {
  /** The value's name in help and usage (`DIR`, `N`). */
  readonly value: string;
  readonly required?: boolean;
  /** The default as --help shows it, when it is made at run time (`report.html`, `<stamp>.json`). */
  readonly defaultText?: string;
  /** The value may start with a dash (`--mpi-params "--bind-to core"`): else such a value is taken for a forgotten one. */
  readonly dashValue?: boolean;
}

export interface StringOption extends ValueOptionBase {
  readonly kind: 'string';
  readonly default?: string;
  readonly choices?: readonly string[];
}

export interface NumberOption extends ValueOptionBase {
  readonly kind: 'number';
  readonly default?: number;
  readonly integer?: boolean;
  readonly min?: number;
  readonly max?: number;
  /** Exclusive lower bound (`seconds > 0`). */
  readonly above?: number;
  /** What the value is, in messages (`seconds`); default `an integer` or `a number`. */
  readonly what?: string;
}

/** May be given several times: every value, in order. */
export interface ListOption extends ValueOptionBase {
  readonly kind: 'multiple';
}

export type OptionSpec = BoolOption | StringOption | NumberOption | ListOption;
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The positional arguments: all of one kind, `min` … `max` of them. */
export interface PositionalSpec {
  /** As usage shows it (`DIR`, `RESULTS.json`). */
  readonly name: string;
  /** One of them in words (`directory`); `plural` defaults to noun + s. */
  readonly noun: string;
  readonly plural?: string;
  readonly min: number;
  /** Infinity: no limit. */
  readonly max: number;
  readonly choices?: readonly string[];
  /** Said after a wrong count (`for one run use kv-cache report`). */
  readonly hint?: string;
}

/** Options of which at most one may be given (exactly one when `required`). */
export interface OptionGroup {
  readonly options: readonly string[];
  readonly required?: boolean;
}

export interface ArgsSpec<O extends OptionSpecs = OptionSpecs> {
  /** The paragraph(s) of --help between the usage line and the options. */
  readonly about: string;
  readonly options: O;
  readonly positional?: PositionalSpec;
  readonly groups?: readonly OptionGroup[];
  /** Text after the options in --help. */
  readonly notes?: string;
}

/** A value option's type once given: its choices' union, a number, or a string. */
type Given<S extends OptionSpec> = S['kind'] extends 'number'
  ? number
  : S extends { readonly choices: ReadonlyArray<infer C> }
    ? C
    : string;

type ValueOf<S extends OptionSpec> = S['kind'] extends 'bool'
  ? boolean
  : S['kind'] extends 'multiple'
    ? string[]
    : S extends { readonly default: string | number } | { readonly required: true }
      ? Given<S>
      : Given<S> | undefined;

export type OptionValues<O extends OptionSpecs> = { readonly [K in keyof O]: ValueOf<O[K]> };

export interface SubArgs<O extends OptionSpecs = OptionSpecs> {
  readonly values: OptionValues<O>;
  readonly positionals: readonly string[];
  /** The options typed on the command line (a default is not). */
  readonly given: ReadonlySet<string>;
}

export type ParseOutcome<O extends OptionSpecs> =
  { readonly help: true } | { readonly help: false; readonly args: SubArgs<O>; readonly problems: readonly string[] };

const HELP: BoolOption = { kind: 'bool', short: 'h', help: 'Show this help' };

type TokenOptions = NonNullable<ParseArgsConfig['options']>;

function tokenOptions(options: OptionSpecs): TokenOptions {
  const out: TokenOptions = { help: { type: 'boolean', short: 'h' } };
  for (const [name, o] of Object.entries(options))
    out[name] = { type: o.kind === 'bool' ? 'boolean' : 'string', ...(o.short !== undefined ? { short: o.short } : {}) };
  return out;
}

function optionOf(options: OptionSpecs, name: string): OptionSpec | undefined {
  return Object.hasOwn(options, name) ? options[name] : undefined;
}

/** `-o/--output FILE`: how messages name an option. */
function label(name: string, o: OptionSpec, withValue = true): string {
  const flag = o.short !== undefined ? `-${o.short}/--${name}` : `--${name}`;
  return withValue && o.kind !== 'bool' ? `${flag} ${o.value}` : flag;
}

/** `-o FILE`: how the usage line names an option (its short form when it has one). */
function usageLabel(name: string, o: OptionSpec): string {
  const flag = o.short !== undefined ? `-${o.short}` : `--${name}`;
  return o.kind !== 'bool' ? `${flag} ${o.value}` : flag;
}

const COUNT_WORDS = ['no', 'one', 'two', 'three'];

function countWord(n: number): string {
  return COUNT_WORDS[n] ?? String(n);
}

function countProblem(p: PositionalSpec, n: number): string | undefined {
  if (n >= p.min && n <= p.max) return undefined;
  if (p.max === 0) return undefined; // reported one by one as unexpected arguments
  const [want, bound] = p.min === p.max ? ['exactly', p.min] : n < p.min ? ['at least', p.min] : ['at most', p.max];
  const noun = bound === 1 ? p.noun : (p.plural ?? `${p.noun}s`);
  return `give ${want} ${countWord(bound)} ${noun} (${p.name}), got ${n}${p.hint !== undefined ? `; ${p.hint}` : ''}`;
}

function positionalProblems(spec: ArgsSpec, positionals: readonly string[]): string[] {
  const p = spec.positional;
  if (p === undefined || p.max === 0)
    return positionals.map((v) => `unexpected argument '${excerpt(v)}' (this command takes options only)`);
  const problems: string[] = [];
  const count = countProblem(p, positionals.length);
  if (count !== undefined) problems.push(count);
  if (p.choices !== undefined)
    for (const v of positionals)
      if (!p.choices.includes(v)) problems.push(`invalid ${p.noun} '${excerpt(v)}'; valid: ${p.choices.join(', ')}`);
  return problems;
}

function rangeText(o: NumberOption): string {
  if (o.above !== undefined) return ` > ${o.above}`;
  if (o.min !== undefined && o.max !== undefined) return ` from ${o.min} to ${o.max}`;
  if (o.min !== undefined) return ` ≥ ${o.min}`;
  return o.max !== undefined ? ` ≤ ${o.max}` : '';
}

function numberOf(name: string, o: NumberOption, text: string, problems: string[]): number | undefined {
  const n = o.integer === true ? intOfText(text) : floatOfText(text);
  const inRange =
    n !== undefined && (o.min === undefined || n >= o.min) && (o.max === undefined || n <= o.max) && (o.above === undefined || n > o.above);
  if (inRange) return n;
  const what = o.what ?? (o.integer === true ? 'an integer' : 'a number');
  problems.push(`--${name} expects ${what}${rangeText(o)}, got '${excerpt(text)}'`);
  return o.default;
}

/** The option's value from what was given (the last one wins, except for `multiple`), checked and converted. */
function valueOf(name: string, o: OptionSpec, given: readonly string[] | undefined, problems: string[]): unknown {
  if (o.kind === 'bool') return given !== undefined;
  if (o.kind === 'multiple') return given ?? [];
  const text = given?.at(-1);
  if (text === undefined) {
    if (o.required === true) problems.push(`${label(name, o)} is required`);
    return o.default;
  }
  if (o.kind === 'number') return numberOf(name, o, text, problems);
  if (o.choices !== undefined && !o.choices.includes(text)) {
    problems.push(`--${name}: invalid choice '${excerpt(text)}'; valid choices: ${o.choices.join(', ')}`);
    return o.default;
  }
  return text;
}

function groupProblems(spec: ArgsSpec, given: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const g of spec.groups ?? []) {
    const count = g.options.filter((n) => given.has(n)).length;
    const names = g.options.map((n) => label(n, spec.options[n], g.required === true));
    if (g.required === true && count !== 1) problems.push(`give exactly one of ${names.join(' or ')}`);
    else if (count > 1) problems.push(`give either ${names.join(' or ')}, not ${g.options.length === 2 ? 'both' : 'several'}`);
  }
  return problems;
}

/**
 * Reads argv against the declaration: every problem at once (unknown options with a "did you mean",
 * missing or malformed values, wrong positional counts), or help when -h/--help is anywhere.
 */
export function parseSubcommandArgs<const O extends OptionSpecs>(spec: ArgsSpec<O>, argv: readonly string[]): ParseOutcome<O> {
  const { tokens } = parseArgs({
    args: [...argv],
    options: tokenOptions(spec.options),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const raw = new Map<string, string[]>();
  const problems: string[] = [];
  const positionals: string[] = [];
  let skipIndex = -1; // the positional after an unknown option is taken to be its value
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') {
      if (t.index !== skipIndex) positionals.push(t.value);
      continue;
    }
    if (t.name === 'help') return { help: true };
    const o = optionOf(spec.options, t.name);
    if (o === undefined) {
      const hint = closestName(t.name, Object.keys(spec.options));
      problems.push(`unknown option '${excerpt(t.rawName)}'${hint !== undefined ? ` (did you mean --${hint}?)` : ''}`);
      if (t.value === undefined) skipIndex = t.index + 1;
      continue;
    }
    if (o.kind === 'bool') {
      if (t.value !== undefined) problems.push(`--${t.name} is a switch and takes no value (got '${excerpt(t.value)}')`);
      else raw.set(t.name, []);
      continue;
    }
    if (t.value === undefined) problems.push(`${label(t.name, o)}: no value given`);
    else if (!t.inlineValue && o.dashValue !== true && t.value.length > 1 && t.value.startsWith('-'))
      problems.push(`${label(t.name, o)}: no value given (got the option '${excerpt(t.value)}')`);
    else raw.set(t.name, [...(o.kind === 'multiple' ? (raw.get(t.name) ?? []) : []), t.value]);
  }
  const values: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(spec.options)) values[name] = valueOf(name, o, raw.get(name), problems);
  const given = new Set(raw.keys());
  problems.push(...groupProblems(spec, given), ...positionalProblems(spec, positionals));
  // The declaration is the type: each value was converted by its option's kind above.
  return { help: false, args: { values: values as OptionValues<O>, positionals, given }, problems };
}

function positionalUsage(p: PositionalSpec): string {
  const one = p.choices !== undefined ? p.choices.join('|') : p.name;
  if (p.max <= 1) return p.min === 0 ? `[${one}]` : one;
  const many = `${one}…`;
  if (p.min === 0) return `[${many}]`;
  return [...Array<string>(p.min - 1).fill(one), many].join(' ');
}

/** `kv-cache NAME …`: the positionals, required options, groups and options marked inUsage, then [options] for the rest. */
export function usageLine(name: string, spec: ArgsSpec): string {
  const parts = [`kv-cache ${name}`];
  if (spec.positional !== undefined && spec.positional.max > 0) parts.push(positionalUsage(spec.positional));
  const inGroup = new Set((spec.groups ?? []).flatMap((g) => g.options));
  const shown = new Set(inGroup);
  for (const [n, o] of Object.entries(spec.options))
    if (o.kind !== 'bool' && o.required === true) {
      parts.push(usageLabel(n, o));
      shown.add(n);
    }
  for (const g of spec.groups ?? []) {
    const alternatives = g.options.map((n) => usageLabel(n, spec.options[n])).join(' | ');
    parts.push(g.required === true ? `(${alternatives})` : `[${alternatives}]`);
  }
  for (const [n, o] of Object.entries(spec.options))
    if (o.inUsage === true && !shown.has(n)) {
      parts.push(`[${usageLabel(n, o)}]`);
      shown.add(n);
    }
  if (Object.entries(spec.options).some(([n, o]) => o.hidden !== true && !shown.has(n))) parts.push('[options]');
  return parts.join(' ');
}

function optionHelp(o: OptionSpec): string {
  if (o.kind === 'bool' || o.kind === 'multiple') return o.help;
  const d = o.defaultText ?? (o.default !== undefined ? String(o.default) : undefined);
  return d !== undefined ? `${o.help} (default: ${d})` : o.help;
}

/** `kv-cache NAME --help`: usage, what it does, each option with its default, then the notes. */
export function subcommandHelp(name: string, spec: ArgsSpec): string {
  const rows: Array<[string, OptionSpec]> = [...Object.entries(spec.options).filter(([, o]) => o.hidden !== true), ['help', HELP]];
  const heads = rows.map(([n, o]) => `  ${o.short !== undefined ? `-${o.short}, ` : ''}--${n}${o.kind === 'bool' ? '' : ` ${o.value}`}`);
  const indent = ' '.repeat(Math.min(32, Math.max(...heads.map((h) => h.length)) + 3));
  const lines = rows.map(([, o], i) => helpLine(heads[i], optionHelp(o), indent));
  const notes = spec.notes !== undefined ? ['', spec.notes] : [];
  return [`Usage: ${usageLine(name, spec)}`, '', spec.about, '', ...lines, ...notes].join('\n');
}

/** Bad arguments: one message naming every problem, then the usage line, on stderr; exit code 2. */
export function badArguments(name: string, spec: ArgsSpec, problems: readonly string[]): number {
  process.stderr.write(`kv-cache ${name}: error: ${new ConfigError(problems).message}\nUsage: ${usageLine(name, spec)}\n`);
  return 2;
}

/**
 * Parses, answers --help, reports bad arguments, else runs `main` with the typed arguments. A
 * ConfigError from `main` (its own checks of the values: files, outputs) is reported the same way.
 */
export async function runWithArgs<const O extends OptionSpecs>(
  name: string,
  spec: ArgsSpec<O>,
  argv: readonly string[],
  main: (args: SubArgs<O>) => Promise<number> | number,
): Promise<number> {
  const parsed = parseSubcommandArgs(spec, argv);
  if (parsed.help) {
    process.stdout.write(`${subcommandHelp(name, spec)}\n`);
    return 0;
  }
  if (parsed.problems.length > 0) return badArguments(name, spec, parsed.problems);
  try {
    return await main(parsed.args);
  } catch (e) {
    if (e instanceof ConfigError) return badArguments(name, spec, e.problems);
    throw e;
  }
}

/**
 * Splits argv into the options `spec` declares (with their values, and -h/--help) and the rest, in
 * order: a subcommand that also takes the run's flags (`size`) parses each half with its own reader.
 */
export function splitDeclared(spec: ArgsSpec, argv: readonly string[]): { own: string[]; rest: string[] } {
  const own: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const name = a.startsWith('--') ? a.slice(2).split('=')[0] : undefined;
    const o = name !== undefined ? optionOf(spec.options, name) : undefined;
    if (a === '-h' || a === '--help') own.push(a);
    else if (o === undefined) rest.push(a);
    else {
      own.push(a);
      if (o.kind !== 'bool' && !a.includes('=') && i + 1 < argv.length) own.push(argv[++i] ?? '');
    }
  }
  return { own, rest };
}

/** The parsed arguments of a declaration: `ArgsOf<typeof REPLAY_ARGS>`. */
export type ArgsOf<S extends ArgsSpec> = SubArgs<S['options']>;
