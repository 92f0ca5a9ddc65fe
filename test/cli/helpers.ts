// Shared helpers of the CLI configuration tests: a fixed start time, argv parsing that returns the
// ConfigError instead of throwing, and YAML fixtures written into a fresh temporary directory.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/cli/errors.js';
import { parseRunArgs } from '../../src/cli/run-args.js';
import type { ParsedRun } from '../../src/cli/run-args.js';
import type { FsProbe } from '../../src/cli/cache-dir.js';

/** 2026-01-02 03:04:05 local time. */
export const NOW = new Date(2026, 0, 2, 3, 4, 5);

export function parse(argv: readonly string[], fs?: FsProbe): ParsedRun {
  return parseRunArgs(argv, NOW, () => 0.25, fs);
}

/** The ConfigError `fn` throws (fails the test if it throws nothing or something else). */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e: unknown) {
    assert.ok(e instanceof ConfigError, `expected a ConfigError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a ConfigError, nothing was thrown');
}

/** The error message of parsing `argv`, which must be rejected. */
export function rejection(argv: readonly string[], fs?: FsProbe): string {
  return configError(() => parse(argv, fs)).message;
}

const made: string[] = [];
// Every temp dir a test file made is removed when its process exits, whatever the outcome.
process.once('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kvcache-cli-test-'));
  made.push(d);
  return d;
}

/** Writes `text` to `<fresh temp dir>/<name>` and returns the path. */
export function writeYaml(text: string, name = 'config.yaml'): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}
