// A subcommand's arguments, read strictly by node:util's parseArgs, with -h/--help handled the same
// way everywhere: an unknown or malformed argument is one message plus the usage (exit 2).
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { messageOf } from '../util/errors.js';
import { ConfigError } from './errors.js';

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Strict parse for subcommands that report every problem at once through a ConfigError: a parse error
 * becomes one, prefixed by the subcommand's name.
 */
export function parseSubcommandArgs<const O extends Options>(argv: readonly string[], options: O, name: string, allowPositionals = true) {
  try {
    return parseArgs({ args: [...argv], allowPositionals, strict: true, options });
  } catch (e) {
    throw new ConfigError([`${name}: ${messageOf(e)}`]);
  }
}

/** The parsed arguments, or the exit code when there is nothing more to do (0: help shown, 2: bad arguments). */
export function readSubcommandArgs<const O extends Options>(argv: readonly string[], options: O, prefix: string, usage: string) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: { ...options, ...HELP_OPTION } });
  } catch (e) {
    process.stderr.write(`${prefix}: error: ${messageOf(e)}\n${usage}\n`);
    return 2;
  }
  if ((parsed.values as { help?: boolean }).help === true) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  return parsed;
}
