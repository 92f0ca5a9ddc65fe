// BurstGPT replay (--use-burst-trace, --burst-trace-path; docs/reference-compat.md#rc-33): the trace's
// files are found and their headers checked at open, then rows are streamed lazily as users pull them,
// paced by --trace-speedup over --replay-cycles passes. Each row is one single-turn request.
import { burstTimeline, createBurstReadStats, readBurstRows, resolveBurstFiles, TraceError } from '../../workload/burstgpt.js';
import type { BurstTimelineItem } from '../../workload/burstgpt.js';
import type { RunConfig } from '../../settings/run-config.js';
import { pulledUsers } from './recorded.js';
import type { RecordedShape } from './recorded.js';
import type { OpenedSource, WorkloadSourceDef } from './source.js';

/**
 * Checks every file's header, and that the trace has at least one usable row (a bad file fails now,
 * not mid-run; a trace of header lines or unparsable rows is refused like an empty ShareGPT file, not
 * run as "0 requests, workload_complete"). Each file is read only up to its first valid row.
 */
async function checkBurstFiles(files: readonly string[]): Promise<void> {
  const stats = createBurstReadStats();
  let usable = 0;
  for (const f of files) {
    const it = readBurstRows([f], stats)[Symbol.asyncIterator]();
    if ((await it.next()).done !== true) usable++;
    await it.return?.(undefined);
  }
  if (usable > 0) return;
  const where = files.length === 1 ? `BurstGPT trace file "${files[0] ?? ''}"` : `BurstGPT trace (${files.length} files)`;
  const why =
    stats.skipped === 0
      ? 'has no data row (only a header)'
      : `has no usable row: all ${stats.skipped} data rows were skipped (${stats.skippedExamples
          .map((e) => `line ${e.line}${files.length > 1 ? ` of "${e.file}"` : ''}: ${e.reason}`)
          .join('; ')}${stats.skipped > stats.skippedExamples.length ? '; …' : ''})`;
  throw new TraceError(
    `${where} ${why}; expected rows like 5,ChatGPT,472,18,490,Conversation log under the header Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`,
    files[0] ?? '',
  );
}

/** A row as a request: the reference's user ids; keys unique per row, so rows never share entries. */
export function burstShape({ row, index: k, scheduledAtMs }: BurstTimelineItem): RecordedShape {
  const userId = `trace_user_${k % 1000}`;
  const id = `${userId}_req_${String(k).padStart(4, '0')}`; // the reference's 4-digit form
  return {
    id,
    userId,
    contextTokens: Math.max(1, row.requestTokens),
    generationTokens: row.responseTokens,
    cacheKey: id,
    turn: 1,
    previousTurnKeys: [],
    scheduledAtMs,
  };
}

async function open(cfg: RunConfig): Promise<OpenedSource> {
  const files = await resolveBurstFiles(cfg.burstTracePath);
  await checkBurstFiles(files);
  const stats = createBurstReadStats();
  const items = burstTimeline(files, { speedup: cfg.traceSpeedup, replayCycles: cfg.replayCycles }, stats)[Symbol.asyncIterator]();
  return {
    describe: () => ({ kind: 'burstgpt', files, rows: stats.rows, skipped_rows: stats.skipped, skipped_examples: stats.skippedExamples }),
    logLines: () => [`BurstGPT: ${files.length} file(s), speed-up ${cfg.traceSpeedup}, cycles ${cfg.replayCycles || 'unlimited'}`],
    users: ({ cfg: switches, parts, rng, stop, share }) => {
      let failure: unknown;
      const context = { ...parts, rng: rng.fork('trace'), multiTurn: !switches.disableMultiTurn };
      const pool = pulledUsers(
        items,
        burstShape,
        context,
        (e) => {
          failure = e;
          stop.stopWith('failed');
        },
        share,
      );
      return { pool, conversationsLost: () => 0, sourceFailure: () => failure };
    },
  };
}

export const burstGptSource: WorkloadSourceDef = {
  kind: 'burstgpt',
  pick: { flag: '--use-burst-trace', what: 'BurstGPT replay', picked: (f) => f.useBurstTrace },
  recorded: true,
  inputs: (f) => (f.useBurstTrace ? [{ flag: '--burst-trace-path', path: f.burstTracePath }] : []),
  open,
  inputErrors: [TraceError],
};
