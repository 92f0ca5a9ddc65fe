// bench:fio options.
import { parseArgs } from 'node:util';
import { BUILTIN_MODELS } from '../../src/model/models.js';
import { KiB } from '../../src/util/units.js';
import { positiveInt } from '../lib/args.js';
import type { Direction } from '../lib/disk-window.js';

export type Workload = Direction;

export interface Options {
  readonly dir: string | undefined;
  readonly seconds: number;
  readonly users: number;
  readonly model: string;
  readonly rounds: number;
  readonly ioBytes: number;
  readonly workloads: readonly Workload[];
}

export function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      dir: { type: 'string' },
      seconds: { type: 'string', default: '30' },
      users: { type: 'string', default: '20' },
      model: { type: 'string', default: 'llama3.1-8b' },
      rounds: { type: 'string', default: '2' },
      'io-kib': { type: 'string', default: '4096' },
      workloads: { type: 'string', default: 'write,read' },
    },
  });
  const workloads = values.workloads.split(',').map((w) => w.trim());
  const unknown = workloads.filter((w) => w !== 'write' && w !== 'read');
  if (unknown.length > 0 || workloads.length === 0)
    throw new Error(`--workloads takes write, read or write,read; got '${values.workloads}'`);
  const ioKib = positiveInt('io-kib', values['io-kib']);
  if (ioKib % 4 !== 0) throw new Error(`--io-kib must be a multiple of 4 (O_DIRECT alignment), got ${ioKib}`);
  if (!BUILTIN_MODELS.has(values.model)) throw new Error(`unknown --model '${values.model}'`);
  return {
    dir: values.dir,
    seconds: positiveInt('seconds', values.seconds),
    users: positiveInt('users', values.users),
    model: values.model,
    rounds: positiveInt('rounds', values.rounds),
    ioBytes: ioKib * KiB,
    workloads: workloads as Workload[],
  };
}
