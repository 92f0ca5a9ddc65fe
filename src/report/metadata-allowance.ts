// What a results file's metadata calibration allowed per new file, for the reports that show it (the
// console's DEVICE I/O line, the HTML metadata section). Files since 2.10.0 record the verdict's figure;
// for older ones the verdict's own rule (metrics/result.ts allowedBytesPerNewFile) is applied to the
// block read back, never a second copy of the rule.
import type { MetadataCalibration } from '../metrics/result.js';
import { allowedBytesPerNewFile } from '../metrics/result.js';
import type { MetadataCalibrationJson } from './metadata-calibration-schema.js';

/** The calibration a results block records, back as the run's plain data (after_window absent when not made). */
function calibrationOfJson(j: MetadataCalibrationJson): MetadataCalibration {
  const after = j.after_window ?? undefined;
  return {
    layout: j.layout,
    filesPerRound: j.files_per_round,
    fileBytes: j.file_bytes,
    roundsBytesPerFile: j.rounds_bytes_per_file,
    bytesPerNewFile: j.bytes_per_new_file,
    roundsBytesPerFileInNewDir: j.rounds_bytes_per_file_in_new_dir,
    bytesPerNewDir: j.bytes_per_new_dir,
    disturbed: j.disturbed,
    seconds: j.seconds,
    ...(after !== undefined
      ? {
          afterWindow: {
            fileBytes: after.file_bytes,
            roundsBytesPerFile: after.rounds_bytes_per_file,
            bytesPerNewFile: after.bytes_per_new_file,
            disturbed: after.disturbed,
            seconds: after.seconds,
          },
        }
      : {}),
  };
}

/**
 * Bytes per new file the run's verdict allowed: the file's own figure, or for a file before 2.10.0
 * (which does not record it) the verdict's rule, allowedBytesPerNewFile, applied to what it does record.
 */
export function verdictBytesPerNewFile(j: MetadataCalibrationJson): number {
  return j.allowed_bytes_per_new_file ?? allowedBytesPerNewFile(calibrationOfJson(j));
}
