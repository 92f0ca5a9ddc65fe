// The one validated, immutable value the engine receives: every flag (settings/flags.ts), the resolved
// model and every config.yaml section (settings/config-keys.ts) with its defaults applied. Field names
// are the camelCase of the flag names, so flag ↔ field is mechanical.
import type { ModelConfig } from '../model/models.js';
import type { Settings } from './config-keys.js';
import type { RunFlags } from './flags.js';

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = Readonly<Record<string, JsonValue>>;

export interface RunConfig extends Omit<RunFlags, 'model'> {
  /** The resolved model (built-in table merged with the config file's model_configs). */
  readonly model: ModelConfig;
  /** The whole model table after the merge (for listing and for error messages). */
  readonly models: ReadonlyMap<string, ModelConfig>;
  /** False when --seed was not given and `seed` was drawn at startup. */
  readonly seedGiven: boolean;
  readonly settings: Settings;
  /** Plain JSON of the effective configuration ({args, model, config} in snake_case) for the results file. */
  readonly effective: JsonObject;
}
