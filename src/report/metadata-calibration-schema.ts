// The results' `kvcache_bench.metadata_calibration` block (issue 34, item 7): what a new file costs the
// cache dir's file system in writes of its own (journal, inode, bitmap and directory blocks), measured
// before the window by making files as the layout makes them (engine/metadata-calibration.ts), and what
// that comes to for the files the run created in its window. The verdict expects these bytes on the
// device beside the tool's, so a file-per-block layout's metadata is named as such and not read as
// another process's writes (docs/storage-io.md#the-metadata-bill).
import * as z from 'zod';
import type { MetadataCalibration } from '../metrics/result.js';
import { allowedBytesPerNewFile } from '../metrics/result.js';

export const MetadataCalibrationSchema = z
  .strictObject({
    layout: z.enum(['flat', 'fanout']).describe('the file layout whose pattern was calibrated'),
    files_per_round: z.number().int().positive().describe('files made and removed per round'),
    file_bytes: z.number().int().positive().describe('data bytes of each calibration file (bytes; the run’s block size, at most 64 KiB)'),
    rounds_bytes_per_file: z
      .array(z.number().nonnegative())
      .describe(
        "per round: the device's written bytes beyond the files' data, per file, the file system synced at the round's end (bytes); fanout files at fan-out paths, their directories made when missing (since 2.10.0)",
      ),
    bytes_per_new_file: z
      .number()
      .nonnegative()
      .describe('the least round (another writer only adds bytes): the file system’s own bytes per new file (bytes)'),
    rounds_bytes_per_file_in_new_dir: z
      .array(z.number().nonnegative())
      .nullable()
      .describe(
        'before 2.10.0, fanout: per round, the same with each file in a directory made for it (bytes); null for flat, and for fanout since 2.10.0 (its directories are in rounds_bytes_per_file)',
      ),
    bytes_per_new_dir: z
      .number()
      .nonnegative()
      .nullable()
      .describe(
        'before 2.10.0, fanout: what a new fan-out directory adds (the least such round less bytes_per_new_file; bytes); null for flat, and for fanout since 2.10.0',
      ),
    new_dirs_in_window: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe('directories the storage tier made in the measured window (metadata_ops.mkdir); null when not counted'),
    disturbed: z
      .boolean()
      .describe(
        'every round saw more than 128 KiB per file, more than a file system writes for one: another writer was busy, and the verdict allows nothing for metadata',
      ),
    seconds: z.number().nonnegative().describe('time the calibration took, before the window (s)'),
    new_files_in_window: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe('files the storage tier created in the measured window (metadata_ops.create); null when not counted'),
    after_window: z
      .strictObject({
        file_bytes: z
          .number()
          .int()
          .positive()
          .describe(
            'data bytes of each file (bytes): as before the window, or fewer whole 4 KiB pages when the storage tier had less room left under its limit',
          ),
        rounds_bytes_per_file: z
          .array(z.number().nonnegative())
          .describe("per round: the device's written bytes beyond the files' data, per file (bytes)"),
        bytes_per_new_file: z.number().nonnegative().describe('the least round (bytes)'),
        disturbed: z.boolean().describe('every round saw more than 128 KiB per file: not used by the verdict'),
        seconds: z.number().nonnegative().describe('time it took, after the window (s)'),
      })
      .nullable()
      .optional()
      .describe(
        "the same rounds among the run's own entries after the window (the cache dir for flat, the namespace directory for fanout), where a grown directory costs a new file more; null when not made (an interrupted or full run, no room left under the tier's limit, or an error, logged); absent before schema 2.10.0",
      ),
    allowed_bytes_per_new_file: z
      .number()
      .nonnegative()
      .optional()
      .describe(
        'what the verdict allows per new file: the larger of bytes_per_new_file and after_window.bytes_per_new_file (undisturbed); 0 when disturbed (bytes); absent before schema 2.10.0',
      ),
    expected_write_bytes: z
      .number()
      .nonnegative()
      .nullable()
      .describe(
        'new_files_in_window × allowed_bytes_per_new_file (+ new_dirs_in_window × bytes_per_new_dir before 2.10.0): the most metadata the verdict allows on the device beside the tool’s bytes (bytes); null when not counted or disturbed',
      ),
  })
  .describe(
    "The file system's own writes per new file, calibrated before the window and among the run's entries after it (flat and fanout layouts on a block device); absent otherwise and before schema 2.8.0",
  );

export type MetadataCalibrationJson = z.infer<typeof MetadataCalibrationSchema>;

export function metadataCalibrationJson(
  c: MetadataCalibration,
  counted: { readonly files: number; readonly dirs: number } | undefined,
): MetadataCalibrationJson {
  return {
    layout: c.layout,
    files_per_round: c.filesPerRound,
    file_bytes: c.fileBytes,
    rounds_bytes_per_file: [...c.roundsBytesPerFile],
    bytes_per_new_file: c.bytesPerNewFile,
    rounds_bytes_per_file_in_new_dir: c.roundsBytesPerFileInNewDir === null ? null : [...c.roundsBytesPerFileInNewDir],
    bytes_per_new_dir: c.bytesPerNewDir,
    new_dirs_in_window: counted?.dirs ?? null,
    disturbed: c.disturbed,
    seconds: c.seconds,
    new_files_in_window: counted?.files ?? null,
    after_window:
      c.afterWindow === undefined
        ? null
        : {
            file_bytes: c.afterWindow.fileBytes,
            rounds_bytes_per_file: [...c.afterWindow.roundsBytesPerFile],
            bytes_per_new_file: c.afterWindow.bytesPerNewFile,
            disturbed: c.afterWindow.disturbed,
            seconds: c.afterWindow.seconds,
          },
    allowed_bytes_per_new_file: allowedBytesPerNewFile(c),
    expected_write_bytes:
      counted !== undefined && !c.disturbed ? counted.files * allowedBytesPerNewFile(c) + counted.dirs * (c.bytesPerNewDir ?? 0) : null,
  };
}
