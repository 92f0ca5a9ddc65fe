// Results files → the report's HTML text: the one entry point of `kv-cache report` and `kv-cache compare --html`.
import { loadUplot, renderReportHtml } from './html-writer.js';
import { buildReportModel } from './model.js';
import type { LoadedRun } from './run-input.js';

export function reportHtml(runs: readonly LoadedRun[], generatedAt: Date, version: string): string {
  return renderReportHtml(buildReportModel(runs), loadUplot(), generatedAt, version);
}
