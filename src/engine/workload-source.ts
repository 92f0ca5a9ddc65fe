// Opens the run's workload source before anything else is set up, so a missing or malformed dataset
// or trace is reported as bad input (exit 2) and nothing is created or written.
import { burstTimeline, createBurstReadStats, readBurstRows, resolveBurstFiles, TraceError } from '../workload/burstgpt.js';
import type { BurstReadStats, BurstTimelineItem } from '../workload/burstgpt.js';
import { loadShareGpt } from '../workload/sharegpt.js';
import type { ShareGptDataset } from '../workload/sharegpt.js';
import { tokenCounter } from '../workload/tokens.js';
import type { RunConfig } from '../settings/run-config.js';

export type WorkloadSource =
  | { readonly kind: 'synthetic' }
  | { readonly kind: 'sharegpt'; readonly path: string; readonly tokenizer: string; readonly dataset: ShareGptDataset }
  | {
      readonly kind: 'burstgpt';
      readonly files: readonly string[];
      readonly stats: BurstReadStats;
      readonly items: AsyncIterator<BurstTimelineItem>;
    };

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

export async function openWorkloadSource(cfg: RunConfig): Promise<WorkloadSource> {
  if (cfg.datasetPath !== undefined) {
    const sg = cfg.settings.sharegpt;
    const tokens = tokenCounter(cfg.tokenizer, sg.charsPerTokenEstimate);
    const dataset = loadShareGpt(cfg.datasetPath, {
      maxConversations: cfg.maxConversations,
      tokens,
      maxContextTokens: sg.maxContextTokens,
      maxGenerationTokens: sg.maxGenerationTokens,
    });
    return { kind: 'sharegpt', path: cfg.datasetPath, tokenizer: tokens.name, dataset };
  }
  if (cfg.useBurstTrace) {
    const files = await resolveBurstFiles(cfg.burstTracePath);
    await checkBurstFiles(files);
    const stats = createBurstReadStats();
    const items = burstTimeline(files, { speedup: cfg.traceSpeedup, replayCycles: cfg.replayCycles }, stats)[Symbol.asyncIterator]();
    return { kind: 'burstgpt', files, stats, items };
  }
  return { kind: 'synthetic' };
}

/** What the results say about the source: files, counts, and every skipped row or record. */
export function describeSource(s: WorkloadSource): Record<string, unknown> {
  switch (s.kind) {
    case 'synthetic':
      return { kind: 'synthetic' };
    case 'sharegpt':
      return { kind: 'sharegpt', path: s.path, tokenizer: s.tokenizer, ...s.dataset.stats };
    case 'burstgpt':
      return {
        kind: 'burstgpt',
        files: s.files,
        rows: s.stats.rows,
        skipped_rows: s.stats.skipped,
        skipped_examples: s.stats.skippedExamples,
      };
  }
}
