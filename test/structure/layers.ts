// The floors of src/: which top-level directory (layer) may import which. This table is the one place
// the rule lives; ARCHITECTURE.md's "What each layer imports" table says the same in prose, and
// test/structure/imports.test.ts holds the code to it. A new layer is one row here; a new dependency
// between layers is an edit here, made on purpose and reviewed, never a side effect.

export const LAYERS = [
  'cli',
  'mlperf',
  'report',
  'engine',
  'telemetry',
  'cache',
  'workload',
  'metrics',
  'settings',
  'tiers',
  'data',
  'trace',
  'model',
  'util',
] as const;

export type Layer = (typeof LAYERS)[number];

export interface LayerRule {
  /** Layers it may import anything from. */
  readonly imports: readonly Layer[];
  /** Layers it may import types from (`import type`), and nothing else. */
  readonly types?: readonly Layer[];
}

export const ALLOWED_IMPORTS: Readonly<Record<Layer, LayerRule>> = {
  // tiers: the storage backend registry, whose rows say what --storage-backend needs at start (validate.ts).
  cli: { imports: ['mlperf', 'report', 'engine', 'telemetry', 'workload', 'metrics', 'settings', 'tiers', 'trace', 'model', 'util'] },
  mlperf: { imports: ['report', 'metrics', 'settings', 'model', 'util'] },
  report: { imports: ['telemetry', 'metrics', 'model', 'util'], types: ['settings', 'tiers'] },
  engine: { imports: ['telemetry', 'cache', 'workload', 'metrics', 'settings', 'tiers', 'data', 'trace', 'model', 'util'] },
  telemetry: { imports: ['metrics', 'util'] },
  cache: { imports: ['metrics', 'settings', 'tiers', 'model', 'util'], types: ['data'] },
  workload: { imports: ['settings', 'model', 'util'] },
  // tiers: TIER_NAMES, the one spelling of the tier names (a constant); otherwise types only.
  metrics: { imports: ['util', 'tiers'], types: ['workload', 'model'] },
  // DEFAULT_GPU_BANDWIDTH_GBS comes from tiers/simulated-gpu.ts, where it acts.
  settings: { imports: ['tiers', 'model', 'util'] },
  tiers: { imports: ['data', 'util'] },
  data: { imports: ['util'] },
  trace: { imports: ['util'] },
  model: { imports: [] },
  util: { imports: [] },
};

/** A known import against the table, with the work that removes it. Remove the row with the import. */
export interface KnownException {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}

export const KNOWN_EXCEPTIONS: readonly KnownException[] = [];
