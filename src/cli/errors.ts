// Typed configuration error. Flags, the YAML file and the cross-field checks all report every problem
// they find at once; the CLI prints the message and exits with code 2 (CONTRIBUTING.md#bad-input).
// Problems quote the user's own input (paths, values): control characters in them are shown escaped,
// so a directory named "res\nid" or an escape sequence cannot forge lines on the console.
import { inert } from '../util/safe-text.js';

/** Problems a message lists at most; `problems` keeps them all. */
export const MAX_LISTED_PROBLEMS = 25;

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    const list = problems.length > 0 ? problems : ['invalid configuration'];
    super(ConfigError.format(list));
    this.name = 'ConfigError';
    this.problems = Object.freeze([...list]);
  }

  private static format(problems: readonly string[]): string {
    if (problems.length === 1) return `Invalid configuration: ${inert(problems[0] ?? '')}`;
    // A hostile input can produce thousands of problems: list the first ones, count the rest.
    const shown = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => `  - ${inert(p)}`);
    if (problems.length > MAX_LISTED_PROBLEMS) shown.push(`  - … and ${problems.length - MAX_LISTED_PROBLEMS} more (not listed)`);
    return `Invalid configuration (${problems.length} problems):\n${shown.join('\n')}`;
  }
}
