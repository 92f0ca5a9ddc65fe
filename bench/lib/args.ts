// Option parsing shared by the bench scripts.

/** `--name value` options with numeric defaults, from this process's arguments. */
export function numberArgs<T extends Record<string, number>>(defaults: T): T {
  const out: Record<string, number> = { ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]?.replace(/^--/, '') ?? '';
    if (!(name in defaults))
      throw new Error(
        `unknown option --${name}; valid: ${Object.keys(defaults)
          .map((k) => `--${k}`)
          .join(' ')}`,
      );
    const v = Number(argv[++i]);
    if (!Number.isFinite(v)) throw new Error(`--${name} needs a number`);
    out[name] = v;
  }
  return out as T;
}

export function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got '${text}'`);
  return n;
}
