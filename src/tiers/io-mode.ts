// How the file tier does its I/O. Declared here, where it acts; settings/choices.ts re-exports it for
// the --io-mode flag (settings read their closed sets from the layer that uses them, never the reverse).
export const IO_MODES = ['direct', 'buffered'] as const;

/** direct = O_DIRECT with aligned buffers (reads never come from the page cache); buffered = the reference's behaviour. */
export type IoMode = (typeof IO_MODES)[number];
