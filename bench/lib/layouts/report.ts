// bench:layouts' tables: every run, and the medians per device × model × layout.
import { GiB } from '../../../src/util/units.js';
import { table } from '../format.js';
import { gibPerSec, medians, opsPerCpuSec, opsPerWallSec, verdictOf } from './figures.js';
import type { RunFigures } from './figures.js';
import { SMALL_MODEL } from './options.js';

/** One measured (or warm-up) run: where, what, which round (0 = warm-up) and its figures. */
export interface LayoutRun {
  readonly device: 'ram' | 'disk';
  readonly model: string;
  readonly layout: string;
  readonly round: number;
  readonly figures: RunFigures;
}

const opt = (v: number | undefined, digits: number): string => (v === undefined ? 'n/a' : v.toFixed(digits));
const count = (v: number | undefined): string => (v === undefined ? 'n/a' : Math.round(v).toLocaleString('en-US'));
const ratios = (r: number | undefined, w: number | undefined): string => `${opt(r, 3)} / ${opt(w, 3)}`;
const layOut = (bytes: number): string => (bytes === 0 ? '-' : (bytes / GiB).toFixed(2));

const COLUMNS = [
  'device',
  'model',
  'layout',
  'round',
  'read GiB/s',
  'write GiB/s',
  'CPU-s/GiB',
  'block ops',
  'ops/CPU-s',
  'ops/wall-s',
  'meta ops/GiB',
  'read p95 ms',
  'dev÷tool r / w',
  'lay-out GiB',
  'validity',
];

export function runRows(runs: readonly LayoutRun[]): string {
  return table(
    COLUMNS,
    runs.map(({ device, model, layout, round, figures: f }) => [
      device,
      model,
      layout,
      round === 0 ? 'warm' : String(round),
      gibPerSec(f.readBytesPerSec),
      gibPerSec(f.writeBytesPerSec),
      opt(f.cpuPerGib, 2),
      count(f.blockOps),
      count(opsPerCpuSec(f)),
      count(opsPerWallSec(f)),
      count(f.metadataPerGib),
      opt(f.readP95Ms, 2),
      ratios(f.deviceReadRatio, f.deviceWriteRatio),
      layOut(f.layOutBytes),
      f.validity,
    ]),
    [COLUMNS.length - 1],
  );
}

/** Medians per device × model × layout, in the order the groups first appear among `runs`. */
export function medianRows(runs: readonly LayoutRun[]): string {
  const measured = runs.filter((r) => r.round > 0);
  const keys = [...new Set(measured.map((r) => `${r.device}\t${r.model}\t${r.layout}`))];
  const header = ['device', 'model', 'layout', 'rounds', ...COLUMNS.slice(4, 7), ...COLUMNS.slice(8, 14), 'verdict'];
  return table(
    header,
    keys.map((key) => {
      const [device = '', model = '', layout = ''] = key.split('\t');
      const m = medians(measured.filter((r) => `${r.device}\t${r.model}\t${r.layout}` === key).map((r) => r.figures));
      return [
        device,
        model,
        layout,
        String(m.rounds),
        gibPerSec(m.readBytesPerSec),
        gibPerSec(m.writeBytesPerSec),
        opt(m.cpuPerGib, 2),
        count(m.opsPerCpuSec),
        count(m.opsPerWallSec),
        count(m.metadataPerGib),
        opt(m.readP95Ms, 2),
        ratios(m.deviceReadRatio, m.deviceWriteRatio),
        layOut(m.layOutBytes),
        verdictOf(m, device === 'ram' && model === SMALL_MODEL),
      ];
    }),
    [header.length - 1],
  );
}
