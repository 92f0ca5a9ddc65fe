// A GPU tier without a GPU (spec §3.8): keeps sizes only and takes size / bandwidth to move an entry,
// so runs on machines without CUDA still have a first tier. Reads that feed a consumer (a demotion
// to CPU or storage) regenerate the entry's payload, which is deterministic per key, so demoted data
// is the same real data that was "written".
import { setTimeout as sleep } from 'node:timers/promises';
import { EntryNotFoundError, timing } from './backend.js';
import type { Backend, ChunkSink, ChunkSource, IOTiming, ReadResult } from './backend.js';

/** Default modelled bandwidth: 64 GB/s (10^9 bytes/s), PCIe 5.0 x16, as the reference's design note. */
export const DEFAULT_GPU_BANDWIDTH_GBS = 64;

export type PayloadSourceOf = (key: string, size: number) => ChunkSource;

export class SimulatedGpuBackend implements Backend {
  readonly tier = 'gpu' as const;
  private readonly sizes = new Map<string, number>();
  private readonly bytesPerMs: number;

  /**
   * `payloadOf` gives an entry's bytes for reads that need them. With `realTime` the operation also
   * waits the modelled time, so wall-clock rates include it; without, only the reported latency does.
   */
  constructor(
    private readonly payloadOf: PayloadSourceOf,
    bandwidthGBs = DEFAULT_GPU_BANDWIDTH_GBS,
    private readonly realTime = true,
  ) {
    if (!(bandwidthGBs > 0)) throw new RangeError('GPU bandwidth must be positive');
    this.bytesPerMs = bandwidthGBs * 1e6;
  }

  private async transfer(size: number): Promise<IOTiming> {
    const ms = size / this.bytesPerMs;
    if (this.realTime && ms >= 1) await sleep(ms);
    return timing(0, ms);
  }

  async write(key: string, source: ChunkSource): Promise<IOTiming> {
    const t = await this.transfer(source.size);
    this.sizes.set(key, source.size);
    return t;
  }

  async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    const size = this.sizes.get(key);
    if (size === undefined) throw new EntryNotFoundError(this.tier, key);
    const t = await this.transfer(size);
    if (sink !== undefined) {
      for await (const chunk of this.payloadOf(key, size).chunks()) await sink(chunk);
    }
    return { timing: t, bytes: size };
  }

  async delete(key: string): Promise<void> {
    this.sizes.delete(key);
  }

  async clear(): Promise<void> {
    this.sizes.clear();
  }

  keys(): Iterable<string> {
    return this.sizes.keys();
  }

  async close(): Promise<void> {
    this.sizes.clear();
  }
}
