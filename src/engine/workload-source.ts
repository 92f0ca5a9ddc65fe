// Opens the run's workload source before anything else is set up, so a missing or malformed dataset
// or trace is reported as bad input (exit 2) and nothing is created or written.
import { burstTimeline, createBurstReadStats, readBurstRows, resolveBurstFiles } from '../workload/burstgpt.js';
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

/** Checks every file's header by reading its first row (a bad file fails now, not mid-run). */
async function checkBurstFiles(files: readonly string[]): Promise<void> {
  for (const f of files) {
    const it = readBurstRows([f], createBurstReadStats())[Symbol.asyncIterator]();
    await it.next();
    await it.return?.(undefined);
  }
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
