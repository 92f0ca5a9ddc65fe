// Option parsing shared by the bench scripts.
import { UsageError } from './clean-exit.js';

/**
 * `--name value` options with numeric defaults, from this process's arguments; `text` names options
 * whose value is a string (read by the caller), skipped here.
 */
export function numberArgs<T extends Record<string, number>>(defaults: T, text: readonly string[] = []): T {
  const out: Record<string, number> = { ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]?.replace(/^--/, '') ?? '';
    if (text.includes(name)) {
      i++;
      continue;
    }
    if (!(name in defaults))
      throw new UsageError(
        `unknown option --${name}; valid: ${Object.keys(defaults)
          .map((k) => `--${k}`)
          .join(' ')}`,
      );
    const v = Number(argv[++i]);
    if (!Number.isFinite(v)) throw new UsageError(`--${name} needs a number`);
    out[name] = v;
  }
  return out as T;
}

export function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got '${text}'`);
  return n;
}
