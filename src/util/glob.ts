// File-name globs with fnmatch/Python-glob rules, and the expansion of a path that may be a file, a
// directory or a glob into the files it names. Each reader turns a problem into its own typed error
// and words (a trace source names itself and the paths it accepts).
import type { Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** True when the text holds a glob metacharacter (`*`, `?`, `[`). */
export function hasGlobChars(text: string): boolean {
  return /[*?[]/.test(text);
}

/**
 * A file-name glob as an anchored RegExp, with fnmatch/Python-glob rules: `*` any run, `?` one
 * character, `[abc]`, `[a-z]`, `[!x]`/`[^x]` classes (an unclosed `[` is literal), and a leading `.`
 * matched only by a pattern that itself starts with `.` (so `*.csv` skips hidden files).
 */
export function globToRegExp(pattern: string): RegExp {
  let src = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '*') src += '.*';
    else if (c === '?') src += '.';
    else if (c === '[') {
      let j = i + 1;
      const negated = pattern[j] === '!' || pattern[j] === '^';
      if (negated) j++;
      const contentStart = j;
      if (pattern[j] === ']') j++; // a `]` first in the class is literal
      const close = pattern.indexOf(']', j);
      if (close === -1) {
        src += '\\[';
        continue;
      }
      const content = pattern.slice(contentStart, close).replace(/[\\\]^[]/g, '\\$&');
      src += `[${negated ? '^' : ''}${content}]`;
      i = close;
    } else src += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  const hidden = pattern.startsWith('.') ? '' : '(?!\\.)';
  return new RegExp(`^${hidden}${src}$`, 's');
}

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch {
    return undefined;
  }
}

/** Regular files (or links to them) in `dir` whose names match, as `dir/name`, sorted by name. */
export async function filesMatching(dir: string, pattern: RegExp): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names: string[] = [];
  for (const entry of entries) {
    if (!pattern.test(entry.name)) continue;
    const isFile = entry.isFile() || (entry.isSymbolicLink() && (await statOrUndefined(join(dir, entry.name)))?.isFile() === true);
    if (isFile) names.push(entry.name);
  }
  names.sort();
  return names.map((name) => join(dir, name));
}

/** Why a path named no files; the reader words it. */
export type PathProblem =
  /** A directory without a file matching the directory pattern. */
  | { readonly kind: 'empty-directory' }
  /** It exists, but is neither a regular file nor a directory. */
  | { readonly kind: 'not-file-or-directory' }
  /** Nothing there, and no glob characters to expand. */
  | { readonly kind: 'not-found' }
  /** Glob characters before the last path component. */
  | { readonly kind: 'glob-in-directory' }
  /** The glob's directory does not exist. */
  | { readonly kind: 'glob-directory-missing'; readonly dir: string }
  | { readonly kind: 'no-match' };

export type ExpandedPath = { readonly ok: true; readonly files: string[] } | { readonly ok: false; readonly problem: PathProblem };

/**
 * A path → the files it names, in reading order: a file → [it]; a directory → its files matching
 * `dirPattern` sorted by name; a glob (metacharacters in the last path component only) → the matching
 * files sorted. An existing path is taken literally even if it contains `[`.
 */
export async function expandPath(spec: string, dirPattern: string): Promise<ExpandedPath> {
  const info = await statOrUndefined(spec);
  const found = (files: string[], empty: PathProblem): ExpandedPath =>
    files.length > 0 ? { ok: true, files } : { ok: false, problem: empty };
  if (info?.isDirectory()) return found(await filesMatching(spec, globToRegExp(dirPattern)), { kind: 'empty-directory' });
  if (info?.isFile()) return { ok: true, files: [spec] };
  if (info) return { ok: false, problem: { kind: 'not-file-or-directory' } };
  if (!hasGlobChars(spec)) return { ok: false, problem: { kind: 'not-found' } };
  const dir = dirname(spec);
  if (hasGlobChars(dir)) return { ok: false, problem: { kind: 'glob-in-directory' } };
  if (!(await statOrUndefined(dir))?.isDirectory()) return { ok: false, problem: { kind: 'glob-directory-missing', dir } };
  return found(await filesMatching(dir, globToRegExp(basename(spec))), { kind: 'no-match' });
}
