// bench:layouts' options: which layouts, devices and models, and how long and how often to run them.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BUILTIN_MODELS } from '../../../src/model/models.js';
import { messageOf } from '../../../src/util/errors.js';
import { positiveInt } from '../args.js';
import { PROJECT_ROOT } from '../kv-cache.js';

export const LAYOUTS = ['flat', 'fanout', 'slab'] as const;
export type Layout = (typeof LAYOUTS)[number];
export const DEVICES = ['ram', 'disk'] as const;
export type DeviceKind = (typeof DEVICES)[number];

/**
 * The small model the block counts are measured with: 32 bytes per token (one layer, one KV head of
 * 16 int8 values, keys and values), so a 512-token trace block is 16 KiB and a run is mostly block
 * operations, not bytes.
 */
export const SMALL_MODEL = 'kv32';
export const SMALL_MODEL_CONFIG = `model_configs:
  ${SMALL_MODEL}:
    name: KV 32 B/token (bench:layouts)
    num_layers: 1
    hidden_dim: 16
    num_heads: 1
    kv_heads: 1
    dtype: int8
`;

/** The public conversation trace beside the project (docs/workloads.md#mooncake-traces). */
export const DEFAULT_TRACE = join(PROJECT_ROOT, '..', 'shared', 'traces', 'mooncake_conversation_trace.jsonl');

export interface Options {
  readonly rounds: number;
  readonly seconds: number;
  readonly layouts: readonly Layout[];
  readonly devices: readonly DeviceKind[];
  /** kv32 (block operations) and optionally built-in models (bandwidth). */
  readonly models: readonly string[];
  readonly users: number;
  /** --storage-capacity-gb of every run: far under each device's free space, so none fills. */
  readonly capacityGiB: number;
  readonly ramGiB: number;
  /** Parent of the disk runs' scratch directory. */
  readonly dir: string;
  readonly trace: string;
  /** Unmeasured runs per device before round 1 (a fresh file system runs slow at first). */
  readonly warmUp: number;
  /** The machine's busy share (%) under which it counts as settled (bench/lib/settle.ts); 100: the device alone. */
  readonly settleBusyPct: number;
  readonly settleLimitSec: number;
}

export { UsageError } from '../clean-exit.js';
import { UsageError } from '../clean-exit.js';

/** A comma-separated list, each item one of `valid`, no repeats. */
function listOf<T extends string>(flag: string, text: string, valid: readonly T[]): T[] {
  const items = text.split(',').map((s) => s.trim());
  const bad = items.filter((s) => !(valid as readonly string[]).includes(s));
  if (bad.length > 0) throw new UsageError(`--${flag}: ${bad.map((b) => `'${b}'`).join(', ')} not one of ${valid.join(', ')}`);
  if (new Set(items).size !== items.length) throw new UsageError(`--${flag}: an item is repeated in '${text}'`);
  return items as T[];
}

const USAGE =
  'valid options: --rounds N --seconds N --layouts flat,fanout,slab --devices ram,disk --models kv32[,tiny-1b…] --users N ' +
  '--capacity-gib X --ram-gib N --dir D --trace FILE --warm-up N --settle-busy-pct N --settle-limit S';

export function parseOptions(argv: readonly string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        rounds: { type: 'string', default: '3' },
        seconds: { type: 'string', default: '15' },
        layouts: { type: 'string', default: LAYOUTS.join(',') },
        devices: { type: 'string', default: DEVICES.join(',') },
        models: { type: 'string', default: SMALL_MODEL },
        users: { type: 'string', default: '8' },
        'capacity-gib': { type: 'string', default: '2' },
        'ram-gib': { type: 'string', default: '8' },
        dir: { type: 'string', default: tmpdir() },
        trace: { type: 'string', default: DEFAULT_TRACE },
        'warm-up': { type: 'string', default: '1' },
        'settle-busy-pct': { type: 'string', default: '15' },
        'settle-limit': { type: 'string', default: '120' },
      },
    }));
  } catch (e) {
    throw new UsageError(`${messageOf(e)}; ${USAGE}`);
  }
  const wrap = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      throw new UsageError(messageOf(e));
    }
  };
  const models = values.models.split(',').map((s) => s.trim());
  const unknown = models.filter((m) => m !== SMALL_MODEL && !BUILTIN_MODELS.has(m));
  if (unknown.length > 0) throw new UsageError(`--models: unknown ${unknown.join(', ')}; valid: ${SMALL_MODEL} or a built-in model`);
  const capacityGiB = Number(values['capacity-gib']);
  if (!(capacityGiB > 0)) throw new UsageError(`--capacity-gib must be a positive number, got '${values['capacity-gib']}'`);
  const warmUp = Number(values['warm-up']);
  if (!Number.isInteger(warmUp) || warmUp < 0) throw new UsageError(`--warm-up must be a whole number ≥ 0, got '${values['warm-up']}'`);
  if (!existsSync(values.trace)) throw new UsageError(`--trace ${values.trace}: no such file (the Mooncake conversation trace)`);
  if (!existsSync(values.dir)) throw new UsageError(`--dir ${values.dir}: no such directory`);
  return {
    rounds: wrap(() => positiveInt('rounds', values.rounds)),
    seconds: wrap(() => positiveInt('seconds', values.seconds)),
    layouts: listOf('layouts', values.layouts, LAYOUTS),
    devices: listOf('devices', values.devices, DEVICES),
    models,
    users: wrap(() => positiveInt('users', values.users)),
    capacityGiB,
    ramGiB: wrap(() => positiveInt('ram-gib', values['ram-gib'])),
    dir: values.dir,
    trace: values.trace,
    warmUp,
    settleBusyPct: wrap(() => positiveInt('settle-busy-pct', values['settle-busy-pct'])),
    settleLimitSec: wrap(() => positiveInt('settle-limit', values['settle-limit'])),
  };
}
