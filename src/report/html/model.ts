// The report's document model: results files → sections of charts, tables and "not recorded" notes.
// Pure data (no HTML): html-writer.ts renders it, the page's script draws the charts from it. Each
// section is one file in sections/ and one row of SECTIONS, in the order the page shows them. The
// sections of SECTIONS chart runs; replays and merged MLPerf summaries get their own sections after them.
import { isOption, isReplay, runsOf } from './inputs.js';
import type { LoadedInput } from './inputs.js';
import type { LoadedRun } from './run-input.js';
import { mergedSummarySection } from './sections/merged-summary.js';
import { replaySection } from './sections/replay.js';
import { autoscalingSection } from './sections/autoscaling.js';
import { deviceSection } from './sections/device.js';
import { distributionSection } from './sections/distributions.js';
import { latencyOverTimeSection } from './sections/latency-over-time.js';
import { parametersSection } from './sections/parameters.js';
import { kvBlocksSection } from './sections/kv-blocks.js';
import { kvPoolSection } from './sections/kv-pool.js';
import { metadataOpsSection } from './sections/metadata-ops.js';
import { qosSection } from './sections/qos.js';
import type { Section, SectionBuilder } from './sections/section.js';
import { throughputSection } from './sections/throughput.js';
import { tiersSection } from './sections/tiers.js';
import { ttftSection } from './sections/ttft.js';

export interface ReportModel {
  readonly title: string;
  /** Every entry of the report, in the order given (the first is the baseline). */
  readonly inputs: readonly LoadedInput[];
  /** The runs among them (each with its position when other kinds are there too). */
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
  kvPoolSection,
  metadataOpsSection,
  deviceSection,
  qosSection,
  ttftSection, // modelled TTFT (issue 23)
  autoscalingSection,
  parametersSection,
];

/** "#2 b.json (replay, direct)" among several entries, the label alone in a report of one. */
export function entryName(inputs: readonly LoadedInput[], entry: LoadedInput): string {
  return inputs.length > 1 ? `#${inputs.indexOf(entry) + 1} ${entry.label}` : entry.label;
}

function titleOf(inputs: readonly LoadedInput[], runs: readonly LoadedRun[]): string {
  if (inputs.length === 1) return `kvcache-bench report: ${inputs[0]?.label ?? ''}`;
  return `kvcache-bench comparison of ${inputs.length} ${runs.length === inputs.length ? 'runs' : 'results'}`;
}

/**
 * The whole report of one file or a comparison of several (the first is the baseline). Run sections
 * appear when there are runs; a replay or a merged summary adds its own section, never a run chart
 * with nothing in it.
 */
export function buildReportModel(inputs: readonly LoadedInput[]): ReportModel {
  const runs = runsOf(inputs);
  const name = (e: LoadedInput): string => entryName(inputs, e);
  const replays = inputs.filter(isReplay);
  const options = inputs.filter(isOption);
  const sections = [
    ...(runs.length > 0 ? SECTIONS.map((build) => build(runs)) : []),
    ...(replays.length > 0 ? [replaySection(replays, name)] : []),
    ...(options.length > 0 ? [mergedSummarySection(options, name)] : []),
  ];
  return { title: titleOf(inputs, runs), inputs, runs, sections };
}
