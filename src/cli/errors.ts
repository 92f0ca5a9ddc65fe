// Typed configuration error. Flags, the YAML file and the cross-field checks all report every problem
// they find at once; the CLI prints the message and exits with code 2 (CONTRIBUTING.md#bad-input).

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    const list = problems.length > 0 ? problems : ['invalid configuration'];
    super(ConfigError.format(list));
    this.name = 'ConfigError';
    this.problems = Object.freeze([...list]);
  }

  private static format(problems: readonly string[]): string {
    if (problems.length === 1) return `Invalid configuration: ${problems[0]}`;
    return `Invalid configuration (${problems.length} problems):\n${problems.map((p) => `  - ${p}`).join('\n')}`;
  }
}
