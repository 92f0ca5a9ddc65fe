// What a results file's calibration allowed per new file: the figure a file since 2.10.0 records, else
// the verdict's own rule on what an older file records (nothing when disturbed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verdictBytesPerNewFile } from '../../src/report/metadata-allowance.js';
import { metadataCalibrationJson } from '../../src/report/metadata-calibration-schema.js';
import type { MetadataCalibration } from '../../src/metrics/result.js';

const before: MetadataCalibration = {
  layout: 'flat',
  filesPerRound: 128,
  fileBytes: 16_384,
  roundsBytesPerFile: [9000, 8192, 8500],
  bytesPerNewFile: 8192,
  roundsBytesPerFileInNewDir: null,
  bytesPerNewDir: null,
  disturbed: false,
  seconds: 0.3,
};
const after = { fileBytes: 16_384, roundsBytesPerFile: [12_288], bytesPerNewFile: 12_288, disturbed: false, seconds: 0.4 };

/** The block as a file before 2.10.0 holds it: no after_window, no allowed_bytes_per_new_file. */
function older(c: MetadataCalibration): ReturnType<typeof metadataCalibrationJson> {
  const { after_window: _a, allowed_bytes_per_new_file: _b, ...json } = metadataCalibrationJson(c, { files: 10, dirs: 0 });
  return json;
}

test("a file since 2.10.0: the verdict's own figure, the larger of the two calibrations", () => {
  assert.equal(verdictBytesPerNewFile(metadataCalibrationJson({ ...before, afterWindow: after }, { files: 10, dirs: 0 })), 12_288);
  const recorded = { ...metadataCalibrationJson(before, undefined), allowed_bytes_per_new_file: 5000 };
  assert.equal(verdictBytesPerNewFile(recorded), 5000, 'what the file records is what it shows');
});

test('a file before 2.10.0: its one figure, or nothing when disturbed', () => {
  assert.equal(verdictBytesPerNewFile(older(before)), 8192);
  assert.equal(verdictBytesPerNewFile(older({ ...before, bytesPerNewFile: 200_000, disturbed: true })), 0);
});
