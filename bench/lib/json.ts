// Typed access to parsed JSON (kv-cache results files, fio's JSON output).
import { readFile } from 'node:fs/promises';

export function field(v: unknown, ...path: ReadonlyArray<string | number>): unknown {
  let cur = v;
  for (const key of path) {
    if (typeof key === 'number') cur = Array.isArray(cur) ? (cur[key] as unknown) : undefined;
    else cur = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Record<string, unknown>)[key] : undefined;
  }
  return cur;
}

export function num(v: unknown, ...path: ReadonlyArray<string | number>): number | undefined {
  const x = field(v, ...path);
  return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
}

export function str(v: unknown, ...path: ReadonlyArray<string | number>): string | undefined {
  const x = field(v, ...path);
  return typeof x === 'string' ? x : undefined;
}

export async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}
