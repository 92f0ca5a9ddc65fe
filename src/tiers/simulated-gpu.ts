// A GPU tier without a GPU (docs/reference-compat.md#rc-7): keeps sizes only, like the null tier, and takes size ÷
// bandwidth to move an entry, so runs on machines without CUDA still have a first tier. Reads that
// feed a consumer (a demotion to CPU or storage) regenerate the entry's payload, which is
// deterministic per key, so demoted data is the same real data that was "written".
import { setTimeout as sleep } from 'node:timers/promises';
import { timing } from './backend.js';
import type { ChunkSink, IOTiming, ReadResult } from './backend.js';
import type { ChunkSource } from '../data/chunk-source.js';
import { NullBackend } from './null.js';

/** Default modelled bandwidth: 64 GB/s (10^9 bytes/s), PCIe 5.0 x16, as the reference's design note. */
export const DEFAULT_GPU_BANDWIDTH_GBS = 64;

export type PayloadSourceOf = (key: string, size: number) => ChunkSource;

export class SimulatedGpuBackend extends NullBackend {
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
    super('gpu', false); // its operations take modelled time: never immediate
    if (!(bandwidthGBs > 0)) throw new RangeError('GPU bandwidth must be positive');
    this.bytesPerMs = bandwidthGBs * 1e6;
  }

  private async transfer(size: number): Promise<IOTiming> {
    const ms = size / this.bytesPerMs;
    if (this.realTime && ms >= 1) await sleep(ms);
    return timing(0, ms);
  }

  override async write(key: string, source: ChunkSource): Promise<IOTiming> {
    const t = await this.transfer(source.size);
    await super.write(key, source);
    return t;
  }

  override async read(key: string, sink?: ChunkSink): Promise<ReadResult> {
    const { bytes } = await super.read(key); // throws EntryNotFoundError for an unknown key
    const t = await this.transfer(bytes);
    if (sink !== undefined) {
      for await (const chunk of this.payloadOf(key, bytes).chunks()) await sink(chunk);
    }
    return { timing: t, bytes };
  }
}
