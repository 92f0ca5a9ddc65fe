// Seeded pseudo-random numbers (xoshiro128**), forkable into named independent streams so that
// each user / subsystem draws from its own sequence and results are reproducible per seed.
import { createHash } from 'node:crypto';

function seedWords(seed: number, stream: string): Uint32Array {
  const h = createHash('sha256').update(`${seed}\u0000${stream}`).digest();
  const s = new Uint32Array(4);
  for (let i = 0; i < 4; i++) s[i] = h.readUInt32LE(i * 4);
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1; // the all-zero state is a fixed point
  return s;
}

export class Rng {
  private readonly s: Uint32Array;

  constructor(
    readonly seed: number,
    readonly stream = '',
  ) {
    this.s = seedWords(seed, stream);
  }

  /** An independent generator for a named sub-stream (same seed + name → same sequence). */
  fork(name: string): Rng {
    return new Rng(this.seed, this.stream === '' ? name : `${this.stream}/${name}`);
  }

  /** Next 32-bit unsigned integer. */
  nextU32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  random(): number {
    const hi = this.nextU32() >>> 5; // 27 bits
    const lo = this.nextU32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform float in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.random();
  }

  /** Uniform integer in [lo, hi], both inclusive (Python's randint). */
  int(lo: number, hi: number): number {
    if (hi < lo) throw new RangeError(`int(${lo}, ${hi}): empty range`);
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  /** One element chosen uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.random() * items.length)];
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
