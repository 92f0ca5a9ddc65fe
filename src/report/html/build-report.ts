// Results files (runs, replays, merged summaries) → the report's HTML text: the one entry point of `kv-cache report` and `kv-cache compare --html`.
import { loadUplot, renderReportHtml } from './html-writer.js';
import { buildReportModel } from './model.js';
import type { LoadedInput } from './inputs.js';

export function reportHtml(runs: readonly LoadedInput[], generatedAt: Date, version: string): string {
  return renderReportHtml(buildReportModel(runs), loadUplot(), generatedAt, version);
}
