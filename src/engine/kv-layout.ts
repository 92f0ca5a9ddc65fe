// --kv-layout as the engine applies it: the slab pool's slot and file sizes worked out from the run's
// flags and model, and the problems of the layout flags that need the model (a slot smaller than a
// block). The flat layout needs nothing; fanout needs nothing either (file-kind.ts).
import { entrySizeOf, kvBytesPerToken } from '../model/models.js';
import type { RunConfig } from '../settings/run-config.js';
import { slotSizeOf } from '../tiers/slab-pool.js';
import type { SlabLayoutOptions } from '../tiers/storage-kind.js';
import { GiB, MiB } from '../util/units.js';
import { PREPARE_ENTRY_TOKENS } from './prepare.js';
import { runBlockTokens, sourceFor } from './sources/registry.js';
import type { SourceFlags } from './sources/source.js';

/** The flags, the resolved model and the settings (a RunConfig has them; the argument parser has them before it builds one). */
type LayoutFlags = SourceFlags & Pick<RunConfig, 'model' | 'settings'>;

/** What a slot must hold by default: one full block, or (whole-request mode) the largest synthetic entry; undefined when the run cannot tell. */
function largestEntryBytes(cfg: LayoutFlags): { bytes: number; what: string } | undefined {
  const perToken = kvBytesPerToken(cfg.model);
  const tp = cfg.tensorParallel >= 1 ? cfg.tensorParallel : 1;
  const blockTokens = runBlockTokens(cfg);
  if (blockTokens !== undefined) return { bytes: entrySizeOf(perToken, blockTokens, tp), what: `a KV block (${blockTokens} tokens)` };
  if (sourceFor(cfg).recorded) return undefined; // a dataset's largest request is known only once read
  const contexts = Object.values(cfg.settings.userTemplates).map((t) => t.contextRange[1]);
  // Pre-populated (--decode-only) and preconditioning entries are PREPARE_ENTRY_TOKENS long.
  const tokens = Math.max(...contexts, cfg.decodeOnly || cfg.precondition ? PREPARE_ENTRY_TOKENS : 0);
  return { bytes: entrySizeOf(perToken, tokens, tp), what: `the largest synthetic entry (${tokens} tokens)` };
}

/** The slab pool's shape, or undefined when the layout is not slab. Call after slabProblems found none. */
export function slabOptionsOf(cfg: LayoutFlags): SlabLayoutOptions | undefined {
  if (cfg.kvLayout !== 'slab') return undefined;
  const given = cfg.slabSlotMib * MiB;
  const slot = given > 0 ? given : (largestEntryBytes(cfg)?.bytes ?? MiB);
  return { slotBytes: slotSizeOf(slot), fileBytes: Math.floor(cfg.slabFileGib * GiB) };
}

const mib = (bytes: number): string => (bytes / MiB).toFixed(3).replace(/\.?0+$/, '');

/** The layout flags against the model and the workload: exit-2 problems (a slot smaller than a block, a file smaller than a slot). */
export function slabProblems(cfg: LayoutFlags): string[] {
  if (cfg.kvLayout !== 'slab') return [];
  const problems: string[] = [];
  const largest = largestEntryBytes(cfg);
  const given = cfg.slabSlotMib * MiB;
  const blockTokens = runBlockTokens(cfg);
  if (given > 0 && blockTokens !== undefined && largest !== undefined && given < largest.bytes)
    problems.push(
      `--slab-slot-mib ${cfg.slabSlotMib} is smaller than ${largest.what}, ${mib(largest.bytes)} MiB for model '${cfg.model.key}': give --slab-slot-mib ${mib(largest.bytes)} or more, or 0 for a slot of one block`,
    );
  if (given === 0 && largest === undefined)
    problems.push(
      '--kv-layout slab replaying whole requests from a dataset needs --slab-slot-mib (its largest entry is known only once read), or --kv-block-tokens N for slots of one block',
    );
  const options = slabOptionsOf(cfg);
  if (options !== undefined && options.fileBytes > 0 && options.fileBytes < options.slotBytes)
    problems.push(
      `--slab-file-gib ${cfg.slabFileGib} is smaller than one slot (${mib(options.slotBytes)} MiB): give at least ${(options.slotBytes / GiB).toFixed(3)}, or 0 for the pool in a few files`,
    );
  return problems;
}
