// How the reports read a results file: through the results document's own schema
// (report/results-schema.ts), made lenient here, instead of a hand-kept copy that drifted from it
// (a decode-only or trace-mode run has no write or read percentiles: the copy required them, so the
// reports refused files the tool itself wrote). `lenient` keeps every field's type and optionality
// and only lets objects carry keys this build does not know (a later minor version, a field another
// tool adds). The per-second series (`kvcache_bench.timeline`, `kvcache_bench.device_telemetry`)
// are exported here in that form.
import * as z from 'zod';
import { DeviceTelemetrySchema as DeviceTelemetryJsonSchema, TimelineSchema as TimelineJsonSchema } from '../results-schema.js';

/**
 * `schema` with every object, however deeply nested (in optional, nullable, array, record and union
 * parts), made loose: unknown keys are kept, not refused. Everything else is the schema as it is.
 */
export function lenient<T extends z.ZodType>(schema: T): T {
  return lenientAny(schema) as T;
}

function lenientAny(s: z.ZodType): z.ZodType {
  if (s instanceof z.ZodObject) {
    const shape = Object.fromEntries(Object.entries(s.shape as Record<string, z.ZodType>).map(([k, v]) => [k, lenientAny(v)]));
    return z.looseObject(shape);
  }
  if (s instanceof z.ZodOptional) return lenientAny(s.unwrap() as z.ZodType).optional();
  if (s instanceof z.ZodNullable) return lenientAny(s.unwrap() as z.ZodType).nullable();
  if (s instanceof z.ZodArray) return z.array(lenientAny(s.element as z.ZodType));
  if (s instanceof z.ZodRecord) {
    const key = s.keyType;
    const value = lenientAny(s.valueType as z.ZodType);
    return s._zod.def.partial === true ? z.partialRecord(key, value) : z.record(key, value);
  }
  if (s instanceof z.ZodUnion) {
    const options = (s.options as z.ZodType[]).map(lenientAny);
    const discriminator = (s._zod.def as { discriminator?: string }).discriminator;
    return discriminator !== undefined
      ? z.discriminatedUnion(discriminator, options as unknown as [z.ZodObject, ...z.ZodObject[]])
      : z.union(options as unknown as [z.ZodType, ...z.ZodType[]]);
  }
  return s;
}

export const TimelineSchema = lenient(TimelineJsonSchema);
export type Timeline = z.output<typeof TimelineSchema>;
export type TimelinePoint = Timeline['points'][number];

export const DeviceTelemetrySchema = lenient(DeviceTelemetryJsonSchema);
export type DeviceTelemetry = z.output<typeof DeviceTelemetrySchema>;
export type DevicePoint = DeviceTelemetry['points'][number];
