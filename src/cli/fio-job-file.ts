// --enable-latency-tracing's fio job file: the results' `fio_workload` text written as the
// reference's `fio_kv_cache_workload_<ts>.ini`, beside --output (the reference writes it in the working
// directory), with <ts> the run's start in local time.
import { dirname, join, resolve } from 'node:path';
import type { ResultsDocument } from '../report/results-schema.js';
import { fileStamp } from '../util/dates.js';
import { messageOf } from '../util/errors.js';
import { writeFileAtomically } from '../util/files.js';

export function fioJobPath(output: string, startedAt: string): string {
  return join(dirname(resolve(output)), `fio_kv_cache_workload_${fileStamp(new Date(startedAt))}.ini`);
}

/** Writes the job file when the results hold one; returns 1 (and says why) when it could not be written. */
export function saveFioJob(output: string, doc: ResultsDocument, say: (line: string) => void): number {
  if (doc.fio_workload === undefined) return 0;
  const path = fioJobPath(output, doc.kvcache_bench.started_at);
  try {
    writeFileAtomically(path, doc.fio_workload);
    say(`fio job saved to ${path}`);
    return 0;
  } catch (e) {
    process.stderr.write(`kv-cache: error: fio job ${path} not written: ${messageOf(e)} (its text is fio_workload in the results)\n`);
    return 1;
  }
}
