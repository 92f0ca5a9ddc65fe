// bench:discrimination's options and its two conditions; the bytes a kv-cache run pre-populates.
import { parseArgs } from 'node:util';
import { PREPARE_ENTRY_TOKENS, PREPOP_ENTRIES_PER_USER } from '../../../src/engine/prepare.js';
import { BUILTIN_MODELS, entryBytes } from '../../../src/model/models.js';
import { messageOf } from '../../../src/util/errors.js';
import { MiB } from '../../../src/util/units.js';
import { positiveInt } from '../args.js';

export type Condition = 'fast' | 'slow';

export interface Options {
  readonly dir: string | undefined;
  readonly seconds: number;
  readonly users: number;
  readonly model: string;
  readonly rounds: number;
  /** Read bandwidth limit of the slow condition, bytes/s (given in MiB/s). */
  readonly readBytesPerSec: number;
  /** Read IOPS limit of the slow condition; 0 = none. */
  readonly readIops: number;
}

export { UsageError } from '../clean-exit.js';
import { UsageError } from '../clean-exit.js';
/** Ctrl-C or SIGTERM stopped the run; what it had started is cleaned up before exiting. */
export class Interrupted extends Error {}

export function parseOptions(argv: readonly string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string' },
        seconds: { type: 'string', default: '15' },
        users: { type: 'string', default: '4' },
        model: { type: 'string', default: 'tiny-1b' },
        rounds: { type: 'string', default: '3' },
        'read-mib-per-sec': { type: 'string', default: '50' },
        'read-iops': { type: 'string', default: '0' },
      },
    }));
  } catch (e) {
    throw new UsageError(
      `${messageOf(e)}; valid options: --dir D --seconds N --users N --model NAME --rounds N --read-mib-per-sec N --read-iops N`,
    );
  }
  const wrap = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      throw new UsageError(messageOf(e));
    }
  };
  if (!BUILTIN_MODELS.has(values.model))
    throw new UsageError(`unknown --model '${values.model}'; valid: ${[...BUILTIN_MODELS.keys()].join(', ')}`);
  const iops = Number(values['read-iops']);
  if (!Number.isInteger(iops) || iops < 0)
    throw new UsageError(`--read-iops must be a whole number ≥ 0 (0 = no limit), got '${values['read-iops']}'`);
  return {
    dir: values.dir,
    seconds: wrap(() => positiveInt('seconds', values.seconds)),
    users: wrap(() => positiveInt('users', values.users)),
    model: values.model,
    rounds: wrap(() => positiveInt('rounds', values.rounds)),
    readBytesPerSec: wrap(() => positiveInt('read-mib-per-sec', values['read-mib-per-sec'])) * MiB,
    readIops: iops,
  };
}

/** Bytes kv-cache pre-populates before a decode-only run: PREPOP_ENTRIES_PER_USER entries per user. */
export function prepopBytes(opts: Options): number {
  return opts.users * PREPOP_ENTRIES_PER_USER * entryBytes(BUILTIN_MODELS.get(opts.model)!, PREPARE_ENTRY_TOKENS);
}
