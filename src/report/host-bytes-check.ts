// A merged MLPerf summary judges each host's device once, against all its ranks' bytes together
// (device_per_host[].bytes_check, mlperf/merge.ts). Which of those values pass lives here, in the
// lowest layer that reads it: the merge's verdict, `kv-cache check` and the HTML report's host table
// must agree on it.

/** bytes_check values that pass: the bytes match, or the excess written is the file system's metadata. */
export const HOST_BYTES_OK: ReadonlySet<string> = new Set(['match', 'device_writes_metadata']);
