// How many times "slower" each figure says the throttled device is, per round and as the median over
// rounds, beside fio's read bandwidth factor; and the verdict against the goal.
import { median } from '../rounds.js';
import { FIGURES } from './figures.js';
import type { Condition } from './options.js';
import type { FioPhase, KvPhase } from './phases.js';

/** kv-cache's storage read factor within this fraction of fio's meets the goal. */
const TOLERANCE = 0.1;

/** fast ÷ slow for a figure that rises with speed, slow ÷ fast for one that falls: > 1 means "the device got slower". */
export function factor(fast: number | undefined, slow: number | undefined, faster: 'higher' | 'lower'): number | undefined {
  if (fast === undefined || slow === undefined) return undefined;
  const [num_, den] = faster === 'higher' ? [fast, slow] : [slow, fast];
  return den > 0 ? num_ / den : undefined;
}

export const showFactor = (x: number | undefined): string => (x === undefined ? 'n/a' : `${x.toFixed(2)}×`);

export const medianOf = (xs: ReadonlyArray<number | undefined>): number | undefined => {
  const known = xs.filter((x): x is number => x !== undefined);
  return known.length === 0 ? undefined : median(known);
};

/** Per-round factors of fio and of every kv-cache figure, and the cross-check, over the given rounds. */
export class Factors {
  constructor(
    private readonly fio: readonly FioPhase[],
    private readonly kv: readonly KvPhase[],
  ) {}

  fioRound(r: number): number | undefined {
    const at = (c: Condition): number | undefined => this.fio.find((p) => p.round === r && p.condition === c)?.bytesPerSec;
    return factor(at('fast'), at('slow'), 'higher');
  }

  kvRound(r: number, pick: (p: KvPhase) => number | undefined, faster: 'higher' | 'lower'): number | undefined {
    const at = (c: Condition): number | undefined => {
      const p = this.kv.find((q) => q.round === r && q.condition === c);
      return p === undefined ? undefined : pick(p);
    };
    return factor(at('fast'), at('slow'), faster);
  }

  /** Rows of the factor table (label, direction, median, ÷ fio, each round) and the two medians of the verdict. */
  table(rounds: readonly number[]): { rows: string[][]; storage: number | undefined; fio: number | undefined } {
    const fioMedian = medianOf(rounds.map((r) => this.fioRound(r)));
    const rows: string[][] = [
      [
        'fio read bandwidth (reference)',
        'fast÷slow',
        '',
        showFactor(fioMedian),
        '1.00',
        ...rounds.map((r) => showFactor(this.fioRound(r))),
      ],
    ];
    const row = (label: string, faster: 'higher' | 'lower', pick: (p: KvPhase) => number | undefined): number | undefined => {
      const per = rounds.map((r) => this.kvRound(r, pick, faster));
      const m = medianOf(per);
      rows.push([
        label,
        faster === 'higher' ? 'fast÷slow' : 'slow÷fast',
        '',
        showFactor(m),
        m === undefined || fioMedian === undefined ? 'n/a' : (m / fioMedian).toFixed(2),
        ...per.map(showFactor),
      ]);
      return m;
    };
    const medians = FIGURES.map((f, i) => row(f.label, f.faster, (p) => p.values[i]));
    row("(cross-check, not kv-cache's) its cgroup's device read MiB/s", 'higher', (p) => p.groupBytesPerSec);
    return { rows, storage: medians[0], fio: fioMedian };
  }
}

export function verdict(what: string, storage: number | undefined, fio: number | undefined): void {
  if (storage === undefined || fio === undefined) return;
  const rel = storage / fio;
  console.log(
    `FINAL (${what}) storage read factor ${storage.toFixed(2)}× vs fio ${fio.toFixed(2)}× → ÷ fio = ${rel.toFixed(3)}: ` +
      `${Math.abs(rel - 1) <= TOLERANCE ? 'within' : 'OUTSIDE'} the ±${TOLERANCE * 100} % goal`,
  );
}
