// Byte units. GiB = 2^30 everywhere; the reference names these fields "_gb" but divides by 2^30.
export const KiB = 1024;
export const MiB = 1024 * 1024;
export const GiB = 1024 * 1024 * 1024;

export function toGiB(bytes: number): number {
  return bytes / GiB;
}

/** Rounds `n` up to a multiple of `align` (a power of two or any positive integer). */
export function roundUp(n: number, align: number): number {
  return Math.ceil(n / align) * align;
}

/** Whole bytes in `gib` GiB (a capacity given as a fraction of a GiB rounds down to a byte count). */
export function gibToBytes(gib: number): number {
  return Math.floor(gib * GiB);
}
