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
/** How a directory's problems name it: its flag, and whether --create-cache-dir would help. */
export interface DirWording {
  readonly flag: string;
  readonly createHint: boolean;
}

const CACHE_DIR_WORDING: DirWording = { flag: 'cache-dir', createHint: true };

export function cacheDirProblems(dir: string, fs: FsProbe = realFs, create = false, wording: DirWording = CACHE_DIR_WORDING): string[] {
  const name = wording.flag;
  if (dir === '') return [`${name} '' is empty: give a directory path (or leave the flag out for a temporary directory)`];
  const abs = resolve(dir);
  const real = physicalPath(abs, fs);
  const system = [abs, real].find(isSystemDir);
  if (system !== undefined) {
    const shown = system === dir ? `'${dir}'` : `'${dir}' (resolves to ${system})`;
    return [`${name} ${shown} cannot be a system directory`];
  }
  const kind = fs.kind(abs);
  if (kind === 'other') return [`${name} '${dir}' exists and is not a directory`];
  if (kind === 'dir') return fs.writable(abs) ? [] : [`${name} '${dir}' is not writable`];
  if (!create)
    return [
      `${name} '${dir}' does not exist; create it first (mkdir -p '${dir}')${wording.createHint ? ' or pass --create-cache-dir' : ''}`,
    ];
  const parent = existingAncestor(abs, fs);
  if (fs.kind(parent) !== 'dir') return [`${name} '${dir}' cannot be created: '${parent}' is not a directory`];
  if (!fs.writable(parent)) return [`${name} '${dir}' cannot be created: parent directory '${parent}' is not writable`];
  return [];
}

/** An input file of the command (config, dataset, trace): an output must never be the same file. */
export interface InputFile {
  /** How the user named it, e.g. '--config' or 'trace'. */
  readonly flag: string;
  readonly path: string;
}

/** Pseudo file systems where no regular file can be created (an output there fails only at the end). */
const PSEUDO_FS_TREES: readonly string[] = ['/proc', '/sys'];

/** The identity of an existing file (device and inode, symlinks followed); undefined when absent. */
function fileIdentity(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** What an existing, non-regular path is, in a user's words; undefined for a regular file or nothing. */
function specialKind(path: string): string | undefined {
  let st;
  try {
    st = statSync(path);
  } catch {
    return undefined;
  }
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device node';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * An output file (results, spreadsheet, trace) must be writable before an hour-long run starts, not
 * after, and must not destroy anything: not a directory, device node or FIFO (as root, replacing
 * `/dev/null` by a rename would replace the node), not one of the command's input files, not on a
 * pseudo file system. Checked without side effects: missing directories are created when the file is
 * written.
 */
export function outputProblems(path: string, flag = '--output', inputs: readonly InputFile[] = []): string[] {
  if (path === '') return [`${flag} is empty; give a file path`];
  if (path.endsWith('/') || path.endsWith(sep)) return [`${flag} ${path} ends in '/' (a directory); give a file path`];
  const special = specialKind(path);
  if (special === 'a directory') return [`${flag} ${path} is a directory; give a file path`];
  if (special !== undefined) return [`${flag} ${path} is ${special}; give a regular file path (it would be replaced by a file)`];
  const id = fileIdentity(path);
  const same = id === undefined ? undefined : inputs.find((i) => fileIdentity(i.path) === id);
  if (same !== undefined) return [`${flag} ${path} is the same file as ${same.flag} ${same.path}; writing it would overwrite the input`];
  const parent = existingAncestor(dirname(resolve(path)), realFs);
  if (realFs.kind(parent) !== 'dir') return [`${flag} ${path}: cannot write there ('${parent}' is not a directory)`];
  const realParent = physicalPath(parent, realFs);
  const pseudo = PSEUDO_FS_TREES.find((t) => isUnder(components(realParent), components(t)));
  if (pseudo !== undefined)
    return [`${flag} ${path}: cannot write there (${pseudo} is a pseudo file system); give a path on a real file system`];
  // The file is replaced by a rename in its directory, so only the directory must be writable.
  if (!realFs.writable(parent)) return [`${flag} ${path}: cannot write there (permission denied or read-only)`];
  return [];
}

/** Two outputs of one command naming the same file (e.g. --output and --xlsx-output): one would overwrite the other. */
export function outputCollisions(outputs: ReadonlyArray<{ readonly flag: string; readonly path: string }>): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const o of outputs) {
    const key = fileIdentity(o.path) ?? physicalPath(resolve(o.path), realFs);
    const before = seen.get(key);
    if (before !== undefined) problems.push(`${o.flag} ${o.path} is the same file as ${before}; give them different paths`);
    else seen.set(key, `${o.flag} ${o.path}`);
  }
  return problems;
}
