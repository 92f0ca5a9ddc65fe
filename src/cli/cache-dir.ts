// Safety check of --cache-dir: the reference's storage tier deletes every *.npy file in that directory at start,
// so it must not be a system location. Unlike the reference (docs/reference-compat.md#rc-4), paths are compared by
// resolved components, not raw string prefixes: /devdata and /etcetera are fine, /dev/x is not, and
// /, /usr, /var, /home themselves are refused too. Symlinks are resolved, so a link into /etc is refused.
// The reference also refuses anything under /root; we drop that rule (this tool commonly runs as root,
// whose home is a normal place for scratch data) and refuse only /root itself.
// Output paths (results, spreadsheet, trace) get the same kind of start-up check, without side effects.
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

/** Directories whose whole subtree is refused. */
const FORBIDDEN_TREES: readonly string[] = ['/etc', '/bin', '/sbin', '/usr/bin', '/usr/sbin', '/boot', '/sys', '/proc', '/dev'];
/** Kernel pseudo file systems: no output file can be created in them, whatever access(2) says. */
const PSEUDO_FS_TREES: readonly string[] = ['/proc', '/sys', '/dev'];
/** Directories refused themselves (their subdirectories, e.g. /var/tmp/x, are fine). */
const FORBIDDEN_EXACT: readonly string[] = ['/', '/usr', '/var', '/home', '/root'];

function components(absPath: string): string[] {
  return absPath.split(sep).filter((c) => c !== '' && c !== '.');
}

function isUnder(path: string[], tree: string[]): boolean {
  return tree.length <= path.length && tree.every((c, i) => path[i] === c);
}

/** True when an absolute, normalised path is a system directory or lies inside a protected tree. */
export function isSystemDir(absPath: string): boolean {
  const parts = components(absPath);
  if (FORBIDDEN_EXACT.some((d) => components(d).join('/') === parts.join('/'))) return true;
  return FORBIDDEN_TREES.some((d) => isUnder(parts, components(d)));
}

/** The file-system facts the check needs; tests substitute a fake. */
export interface FsProbe {
  kind(path: string): 'dir' | 'other' | 'missing';
  /** Symlinks resolved; only called on existing paths. */
  realpath(path: string): string;
  writable(path: string): boolean;
}

export const realFs: FsProbe = {
  kind(path) {
    try {
      return statSync(path).isDirectory() ? 'dir' : 'other';
    } catch {
      return 'missing';
    }
  },
  realpath: (path) => realpathSync(path),
  writable(path) {
    try {
      accessSync(path, constants.W_OK | constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

/** The nearest existing ancestor of `abs` (itself if it exists). */
export function existingAncestor(abs: string, fs: FsProbe): string {
  let p = abs;
  while (fs.kind(p) === 'missing' && dirname(p) !== p) p = dirname(p);
  return p;
}

/** `abs` with symlinks of its existing part resolved. */
function physicalPath(abs: string, fs: FsProbe): string {
  const base = existingAncestor(abs, fs);
  const rest = abs.slice(base.length).replace(/^[/\\]+/, '');
  let real = base;
  try {
    real = fs.realpath(base);
  } catch {
    // unreadable: keep the lexical path, still checked below
  }
  return rest === '' ? real : join(real, rest);
}

/**
 * Problems with a cache directory (empty when it is usable). A missing one is refused unless `create`:
 * a mistyped path must not silently become a benchmark of whatever disk holds its nearest ancestor.
 */
export function cacheDirProblems(dir: string, fs: FsProbe = realFs, create = false): string[] {
  const abs = resolve(dir);
  const real = physicalPath(abs, fs);
  const system = [abs, real].find(isSystemDir);
  if (system !== undefined) {
    const shown = system === dir ? `'${dir}'` : `'${dir}' (resolves to ${system})`;
    return [`cache-dir ${shown} cannot be a system directory`];
  }
  const kind = fs.kind(abs);
  if (kind === 'other') return [`cache-dir '${dir}' exists and is not a directory`];
  if (kind === 'dir') return fs.writable(abs) ? [] : [`cache-dir '${dir}' is not writable`];
  if (!create) return [`cache-dir '${dir}' does not exist; create it first (mkdir -p '${dir}') or pass --create-cache-dir`];
  const parent = existingAncestor(abs, fs);
  if (fs.kind(parent) !== 'dir') return [`cache-dir '${dir}' cannot be created: '${parent}' is not a directory`];
  if (!fs.writable(parent)) return [`cache-dir '${dir}' cannot be created: parent directory '${parent}' is not writable`];
  return [];
}

/**
 * An output file (results, spreadsheet, trace) must be writable before an hour-long run starts, not
 * after. Checked without side effects: missing directories are created when the file is written.
 */
export function outputProblems(path: string, flag = '--output'): string[] {
  // Kernel pseudo file systems accept access(W_OK) for root but create no files: refuse them up front.
  const pseudo = PSEUDO_FS_TREES.find((t) => (resolve(path) + sep).startsWith(`${t}${sep}`));
  if (pseudo !== undefined)
    return [`${flag} ${path}: cannot write there (${pseudo} is a kernel pseudo file system); give a path on a disk`];
  const kind = realFs.kind(path);
  if (kind === 'dir') return [`${flag} ${path} is a directory; give a file path`];
  const parent = existingAncestor(dirname(resolve(path)), realFs);
  if (realFs.kind(parent) !== 'dir') return [`${flag} ${path}: cannot write there ('${parent}' is not a directory)`];
  // The file is replaced by a rename in its directory, so only the directory must be writable.
  if (!realFs.writable(parent)) return [`${flag} ${path}: cannot write there (permission denied)`];
  return [];
}
