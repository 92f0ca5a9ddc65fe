// The report's document model: results files → sections of charts, tables and "not recorded" notes.
// Pure data (no HTML): html-writer.ts renders it, the page's script draws the charts from it. Each
// section is one file in sections/ and one row of SECTIONS, in the order the page shows them.
import type { LoadedRun } from './run-input.js';
import { autoscalingSection } from './sections/autoscaling.js';
import { deviceSection } from './sections/device.js';
import { distributionSection } from './sections/distributions.js';
import { latencyOverTimeSection } from './sections/latency-over-time.js';
import { parametersSection } from './sections/parameters.js';
import { kvBlocksSection } from './sections/kv-blocks.js';
import { qosSection } from './sections/qos.js';
import type { Section, SectionBuilder } from './sections/section.js';
import { throughputSection } from './sections/throughput.js';
import { tiersSection } from './sections/tiers.js';
import { ttftSection } from './sections/ttft.js';

export interface ReportModel {
  readonly title: string;
  readonly runs: readonly LoadedRun[];
  readonly sections: readonly Section[];
}

/** The report's sections, top to bottom: a new section is a file in sections/ and a row here. */
export const SECTIONS: readonly SectionBuilder[] = [
  throughputSection,
  latencyOverTimeSection,
  distributionSection,
  tiersSection,
  kvBlocksSection,
  deviceSection,
  qosSection,
  ttftSection, // modelled TTFT (issue 23)
  autoscalingSection,
  parametersSection,
];

/** The whole report of one run or a comparison of several (the first run is the baseline). */
export function buildReportModel(runs: readonly LoadedRun[]): ReportModel {
  const title = runs.length === 1 ? `kvcache-bench report: ${runs[0]?.label ?? ''}` : `kvcache-bench comparison of ${runs.length} runs`;
  return { title, runs, sections: SECTIONS.map((build) => build(runs)) };
}
