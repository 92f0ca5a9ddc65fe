// The list of workload sources, and what the engine and the command line ask of it: which source the
// flags pick, whether two are picked, the files it reads, whether an error is bad input, and opening
// it. A new source is one file beside this one plus one row here. Functions take the list as a
// parameter (default: the real one) so a test can run a copy with a source of its own.
import type { RunConfig } from '../../settings/run-config.js';
import { burstGptSource } from './burstgpt.js';
import { mooncakeSource } from './mooncake.js';
import { shareGptSource } from './sharegpt.js';
import type { OpenedSource, SourceFlags, SourceInput, WorkloadSourceDef } from './source.js';
import { syntheticSource } from './synthetic.js';

/** Every source; exactly one without a `pick` (the default). */
export const WORKLOAD_SOURCES: readonly WorkloadSourceDef[] = Object.freeze([
  shareGptSource,
  burstGptSource,
  mooncakeSource,
  syntheticSource,
]);

/** The sources the flags pick, in list order (more than one is a problem: sourceProblems). */
export function pickedSources(f: SourceFlags, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): WorkloadSourceDef[] {
  return sources.filter((s) => s.pick?.picked(f) === true);
}

/** The source of a run: the one the flags pick, else the default. */
export function sourceFor(f: SourceFlags, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): WorkloadSourceDef {
  const chosen = pickedSources(f, sources)[0] ?? sources.find((s) => s.pick === undefined);
  if (chosen === undefined) throw new Error('the workload source list has no default source');
  return chosen;
}

/** A run replays one source: two or more picked is one problem naming their flags. */
export function sourceProblems(f: SourceFlags, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): string[] {
  const picks = pickedSources(f, sources).flatMap((s) => (s.pick !== undefined ? [s.pick] : []));
  if (picks.length < 2) return [];
  const named = picks.map((p) => `${p.flag} (${p.what})`).join(' and ');
  return [`${named} are mutually exclusive: a run replays one workload source; drop ${picks.length === 2 ? 'one of them' : 'all but one'}`];
}

/**
 * Tokens per KV block of the run, or undefined for whole-request entries (the reference's model):
 * --kv-block-tokens when given, else what the source's recording implies.
 */
export function runBlockTokens(f: SourceFlags, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): number | undefined {
  if (f.kvBlockTokens > 0) return f.kvBlockTokens;
  return sourceFor(f, sources).blockTokens?.(f);
}

/** The files the picked sources read (checked against every output at start). */
export function sourceInputs(f: SourceFlags, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): SourceInput[] {
  return pickedSources(f, sources).flatMap((s) => s.inputs(f));
}

/** True when `e` is a source's bad-input error (exit 2), false for anything else. */
export function isSourceInputError(e: unknown, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): e is Error {
  return sources.some((s) => s.inputErrors.some((type) => e instanceof type));
}

/**
 * Opens the run's source before anything else is set up, so a missing or malformed dataset or trace
 * is reported as bad input (exit 2) and nothing is created or written.
 */
export function openWorkloadSource(cfg: RunConfig, sources: readonly WorkloadSourceDef[] = WORKLOAD_SOURCES): Promise<OpenedSource> {
  return sourceFor(cfg, sources).open(cfg);
}
