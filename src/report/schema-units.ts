// Field helpers the results schemas share: each states the figure's unit in its description, so the
// generated JSON Schema says what every number means.
import * as z from 'zod';

/** A duration in milliseconds. */
export const ms = (what: string): z.ZodNumber => z.number().nonnegative().describe(`${what} (ms)`);
/** A whole count of something. */
export const count = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(what);
/** A whole number of bytes. */
export const bytes = (what: string): z.ZodNumber => z.number().int().nonnegative().describe(`${what} (bytes)`);
/** A rate over the measured window, in the unit given. */
export const rate = (what: string, unit: string): z.ZodNumber =>
  z.number().nonnegative().describe(`${what} over the measured window (${unit})`);
