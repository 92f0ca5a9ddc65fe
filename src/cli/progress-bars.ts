// Progress of the long preparation steps (RAG ingestion, pre-population, preconditioning), drawn from
// the engine's PrepareProgress events: on a terminal a cli-progress bar per step; anywhere else (a log
// file, CI, a pipe, or --no-progress) one plain line per 10 %, without a single escape code.
import cliProgress from 'cli-progress';
import type { PreparePhase, PrepareProgress, PrepareProgressListener } from '../engine/prepare.js';
import { GiB } from '../util/units.js';

/** Where progress goes: a stream, and whether it is a terminal. */
export interface ProgressStream {
  write(chunk: string): boolean;
  readonly isTTY?: boolean;
}

const LABELS: Readonly<Record<PreparePhase, string>> = {
  rag_ingestion: 'RAG ingestion',
  prepopulation: 'Pre-population',
  preconditioning: 'Preconditioning',
};

/** `done of total unit`, bytes in GiB (2^30). */
export function amountText(p: Pick<PrepareProgress, 'done' | 'total' | 'unit'>): string {
  if (p.unit === 'bytes') return `${(p.done / GiB).toFixed(2)} of ${(p.total / GiB).toFixed(2)} GiB`;
  return `${p.done.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')} ${p.unit}`;
}

/** Tenths of the step done, 0–10 (a step with nothing to do is complete). */
const tenths = (p: PrepareProgress): number => (p.total > 0 ? Math.min(10, Math.floor((p.done / p.total) * 10)) : 10);

/** One line per 10 % reached, and a closing line if the step ended short of 100 %. */
function plainLines(out: ProgressStream): PrepareProgressListener {
  const printed = new Map<PreparePhase, number>();
  return (p) => {
    const last = printed.get(p.phase) ?? 0;
    const now = tenths(p);
    if (p.done > 0 && now > last) {
      printed.set(p.phase, now);
      out.write(`${LABELS[p.phase]}: ${now * 10} % (${amountText(p)})\n`);
    }
    if (p.finished) {
      if ((printed.get(p.phase) ?? 0) < 10) out.write(`${LABELS[p.phase]}: stopped at ${amountText(p)}\n`);
      printed.delete(p.phase);
    }
  };
}

/** A cli-progress bar per step, redrawn in place on the terminal. */
function bars(out: ProgressStream): PrepareProgressListener {
  let bar: cliProgress.SingleBar | undefined;
  return (p) => {
    const payload = { amount: amountText(p) };
    if (bar === undefined) {
      bar = new cliProgress.SingleBar({
        stream: out as NodeJS.WritableStream,
        format: `${LABELS[p.phase].padEnd(16)} [{bar}] {percentage}% {amount}  ETA {eta_formatted}`,
        hideCursor: false,
        clearOnComplete: false,
        etaBuffer: 50,
      });
      bar.start(Math.max(1, p.total), 0, payload);
    }
    bar.update(Math.min(p.done, Math.max(1, p.total)), payload);
    if (p.finished) {
      bar.stop();
      bar = undefined;
    }
  };
}

/** Bars when `wantBars` and the stream is a terminal; plain lines otherwise. */
export function prepareProgressRenderer(out: ProgressStream, wantBars: boolean): PrepareProgressListener {
  return wantBars && out.isTTY === true ? bars(out) : plainLines(out);
}
