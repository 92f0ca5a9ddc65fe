/**
 * --file-calls: how the file tier makes a one-chunk entry's system calls (tiers/block-file.ts): the C
 * helper through io_uring where the kernel allows it, else on its threads (native), one of those two
 * only, or Node's fs for every call.
 */
export const FILE_CALLS = ['native', 'io_uring', 'threads', 'fs'] as const;
export type FileCalls = (typeof FILE_CALLS)[number];
