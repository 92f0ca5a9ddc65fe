// What a storage backend kind gives the engine: one row of the registry (registry.ts), as fio's
// ioengine table gives fio an engine. The engine asks for a kind by name and sees only these types:
// how to open it, what it is (worked out once), its default capacity, its leftovers from earlier runs,
// which failures mean it is full, and what to warn about.
import type { DirectSlabs } from '../data/aligned.js';
import type { Backend } from './backend.js';
import type { IoMode } from './io-mode.js';

import type { FileIoStats } from './file-io-gauge.js';
import type { PoolIdentity } from './pool-names.js';
import type { SlabReport } from './slab-pool.js';
import type { MetadataOpSink } from './metadata-ops.js';
import type { FileCalls } from './file-calls.js';

/** A temporary directory a kind made for its entry files, whose run id names them (engine's EntryFilesAt). */
export interface MadeDir {
  readonly dir: string;
  readonly runId: string;
  readonly ownsDir: true;
}

/** Plain options every kind is opened with (never the RunConfig). */
export interface StorageOpenOptions {
  /** --cache-dir; absent: the kind decides (the file kind makes a fresh temporary directory). */
  readonly dir?: string;
  /** The I/O mode asked for. */
  readonly ioMode: IoMode;
  /** Largest single I/O. */
  readonly chunkBytes: number;
  /** Operations that may hold a staging buffer at once. */
  readonly stagingSlots: number;
  /** Callers' aligned buffers (payload slots, CPU-tier pages) a direct write may take as they are. */
  readonly directSlabs: DirectSlabs;
  /** The --s3-* flags, for an object-store kind; the other kinds ignore them. */
  readonly objectStore?: ObjectStoreOptions;
  /** A shared KV pool (--kv-pool shared): blocks named by key and identity, published atomically. */
  readonly pool?: PoolOpenOptions;
  /** --kv-layout slab: the file kind keeps entries in slots of pool files (slab-kind.ts); absent: one file per entry. */
  readonly slab?: SlabLayoutOptions;
  /** --kv-layout fanout: the file kind keeps one file per entry under hash fan-out directories of the run's own (file.ts). */
  readonly fanout?: boolean;
  /** --file-calls: the file kind's one-chunk entries as native jobs (tiers/block-file.ts) or Node's fs calls; absent: native. */
  readonly fileCalls?: FileCalls;
  /** --enable-latency-tracing: its probes time read, write and fsync system calls, which io_uring does not make. */
  readonly tracesSystemCalls?: boolean;
  /**
   * Told the moment the kind made a temporary directory for its entries (no dir given), before anything
   * else is awaited, so that a force-quit during set-up can remove it (issue 35).
   */
  readonly madeDir?: (at: MadeDir) => void;
  /** Hears of every metadata call the kind makes (creates, renames, links, unlinks, lookups, mkdirs; tiers/metadata-ops.ts). */
  readonly metadataOps?: MetadataOpSink;
}

/** How a kind opens a shared pool. */
export interface PoolOpenOptions {
  readonly identity: PoolIdentity;
  /** --keep-pool: leave what this run published. */
  readonly keep: boolean;
}

/** A shared pool's contents when this rank opened it (kvcache_bench.kv_pool.at_start). */
export interface PoolAtStart {
  /** Where the pool's blocks are: a directory, or a bucket and key prefix. */
  readonly location: string;
  readonly namespace: string;
  readonly blocks: number;
  readonly blockBytes: number;
  /** Temporary files or objects of writers killed mid-block, and how many were removed (--remove-stale-entries). */
  readonly staleTemps: number;
  readonly staleTempBytes: number;
  readonly staleTempsRemoved: number;
}

/** A slab pool's shape as the flags give it. */
export interface SlabLayoutOptions {
  /** Bytes of a slot, a multiple of 4 KiB (slab-pool.ts slotSizeOf). */
  readonly slotBytes: number;
  /** Bytes of a pool file, rounded down to whole slots; 0: the pool in a few files. */
  readonly fileBytes: number;
}

/** Where an object-store kind keeps its entries (the --s3-* flags). Credentials are never among them. */
export interface ObjectStoreOptions {
  /** http(s)://host[:port]; absent: the provider's own endpoint for the region. */
  readonly endpoint?: string;
  readonly bucket?: string;
  /** Create the bucket when it does not exist (--create-bucket). */
  readonly createBucket: boolean;
  /** Key prefix of this run's objects ('' or ending in '/'). */
  readonly prefix: string;
  readonly region?: string;
  /** Path-style addressing (bucket in the path) even for the provider's own endpoint. */
  readonly pathStyle: boolean;
  /** PEM file of CAs trusted for an https:// endpoint beside Node's own (--s3-ca-file). */
  readonly caFile?: string;
}

/** The --s3-* flag values as the run's flags hold them. */
export interface ObjectStoreFlags {
  readonly s3Endpoint?: string;
  readonly s3Bucket?: string;
  readonly createBucket: boolean;
  readonly s3Prefix: string;
  readonly s3Region?: string;
  readonly s3PathStyle: boolean;
  readonly s3CaFile?: string;
}

/** The open options of the --s3-* flags. */
export function objectStoreOptionsOf(f: ObjectStoreFlags): ObjectStoreOptions {
  return {
    ...(f.s3Endpoint !== undefined ? { endpoint: f.s3Endpoint } : {}),
    ...(f.s3Bucket !== undefined ? { bucket: f.s3Bucket } : {}),
    createBucket: f.createBucket,
    prefix: f.s3Prefix,
    ...(f.s3Region !== undefined ? { region: f.s3Region } : {}),
    pathStyle: f.s3PathStyle,
    ...(f.s3CaFile !== undefined ? { caFile: f.s3CaFile } : {}),
  };
}

/**
 * The storage cannot be used as the flags say it (a bucket missing, credentials refused, an endpoint
 * unreachable), found when it is opened, before anything is measured: a user error (exit 2).
 */
export class StorageSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageSetupError';
  }
}

/** Where an object store is and how its client is set: the first half of its results block. */
export interface ObjectStoreSettings {
  /** Host (and port) of the endpoint only: never a path, query or credential. */
  readonly endpointHost: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly region: string;
  readonly addressing: 'path' | 'virtual-host';
  /** The client and its settings. */
  readonly client: string;
  readonly maxConnections: number;
  readonly idleTimeoutMs: number;
  readonly maxAttempts: number;
  readonly multipartAboveBytes: number;
  readonly partBytes: number;
}

/** An object store's own account of a run, for the results (kvcache_bench.object_store). */
export type ObjectStoreReport = ObjectStoreSettings & ObjectStoreStats;

/** What the results say about the object store's traffic. */
export interface ObjectStoreStats {
  readonly requests: number;
  readonly retries: number;
  readonly puts: number;
  readonly multipartUploads: number;
  readonly gets: number;
  readonly deletes: number;
  /** Failed operations by class (HTTP_403, HTTP_404, HTTP_5XX, SLOWDOWN, ECONNRESET, ECONNREFUSED, ETIMEDOUT, EDQUOT, …). */
  readonly failures: Readonly<Record<string, number>>;
  /** GET time to first byte, ms. */
  readonly getFirstByteMs: LatencySummaryMs;
  /** PUT time from request start to the server's answer, ms (the whole upload). */
  readonly putMs: LatencySummaryMs;
}

/** Count, mean, percentiles and maximum of one operation's times, ms. */
export interface LatencySummaryMs {
  readonly count: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** What the storage is, worked out once when it is opened. */
export interface StorageDescription {
  /** The registry's name of the kind. */
  readonly kind: string;
  /** Where the entries live as the results' storage_dir says it: a directory, an endpoint, or words. */
  readonly location: string;
  /** A local directory whose block device carries the I/O; absent when there is none. */
  readonly dir?: string;
  /** Without `dir`: why no device counters stand behind this storage. */
  readonly noDevice?: string;
  /** Without `dir`: the storage-under-test line's description of it. */
  readonly headline?: string;
  /** The I/O mode in effect (or words for a kind without one). */
  readonly ioMode: string;
  readonly fileSystem: string;
  /** The entries are in RAM, so the figures measure memory: on a RAM file system, or in a backend kept in memory. */
  readonly inRam?: 'file system' | 'backend';
  /** How the file kind lays entries out (--kv-layout; a shared pool is always 'fanout'); absent for other kinds. */
  readonly layout?: 'flat' | 'fanout' | 'slab';
  /** How the file kind makes a one-chunk entry's calls (results' storage_file_calls); absent for other kinds and layouts. */
  readonly fileCalls?: string;
  /** The file kind's flat or fan-out entries: the directory they are made in (the cache dir, or the namespace directory). */
  readonly entryDir?: string;
}

/** Entries of earlier runs found at start, and how many were removed. */
export interface LeftoverEntries {
  readonly count: number;
  /** Their apparent sizes. */
  readonly bytes: number;
  /** What they occupy on the medium. */
  readonly allocatedBytes: number;
  readonly removed: number;
}

/** The storage tier's backend: a Backend that can also say an entry's size (replay's reads check it). */
export interface StorageBackend extends Backend {
  sizeOf(key: string): number | undefined;
}

/** When the storage is full: which failure classes mean it, and the space left when one was seen. */
export interface StorageFullness {
  /** Names the storage in the storage-full warning, e.g. `/mnt/x (xfs)`. */
  readonly where: string;
  isFullError(errorClass: string): boolean;
  space(): Promise<{ readonly freeBytes: number; readonly sizeBytes: number } | undefined>;
}

/** A kind, opened. */
export interface OpenedStorage {
  readonly backend: StorageBackend;
  readonly description: StorageDescription;
  /** A directory where aligned buffers probe O_DIRECT for this storage; absent: none needed. */
  readonly probeDir?: string;
  /** Said at start: O_DIRECT refused, RAM behind the storage, … */
  readonly warnings: readonly string[];
  /**
   * Earlier runs' entries, removed when `remove` (--remove-stale-entries); `found` null when a kind keeps
   * nothing between runs. A shared pool's own account (its blocks, killed writers' temporary copies) in `pool`.
   */
  leftovers(
    remove: boolean,
  ): Promise<{ readonly found: LeftoverEntries | null; readonly warnings: readonly string[]; readonly pool?: PoolAtStart }>;
  /** The tier's limit: `capacityBytes` (--storage-capacity-gb) when positive, else the kind's default. */
  limitBytes(capacityBytes: number): Promise<number>;
  readonly fullness: StorageFullness;
  /** Whether a key is stored under its own name (the file kind: a file name short enough); absent: every key is. A replay hashes the others. */
  readonly keyFits?: (key: string) => boolean;
  /**
   * Where this run's entries are as files named `kvc-<runId>-*.bin` (file-names.ts), for a force-quit's
   * synchronous removal; `ownsDir` when the directory is a temporary one the kind made. Absent: nothing
   * to remove (a kind keeping its entries in memory, or an object store, which its own teardown empties).
   */
  readonly entryFiles?: { readonly dir: string; readonly runId: string; readonly ownsDir: boolean; readonly fanout?: string };
  /** Where this run's own objects go in an object store and what to do about them (a force-quit names them: it cannot delete them); absent for other kinds. */
  readonly objectsAt?: string;
  /** An object store's account of its traffic so far (retries, failures by class, time to first byte). */
  readonly objectStore?: () => ObjectStoreReport;
  /** A kind on local files: its threadpool use and staging waits (file-io-gauge.ts). */
  readonly fileIo?: FileIoFigures;
  /**
   * Work the storage needs once its limit is known and before anything is written or measured (a slab
   * pool is laid out); absent: none. A StorageSetupError from it is a user error (exit 2).
   */
  readonly layOut?: (signal?: AbortSignal) => Promise<void>;
  /** A slab pool's account (kvcache_bench.slab); absent for other layouts and kinds. */
  readonly slab?: () => SlabReport;
}

/** Figures kept over a run and started again after preparation (as plain data when read). */
export interface FileIoFigures {
  readonly stats: FileIoStats;
  resetStats(): void;
}

export interface StorageKind {
  /** One line for --help. */
  readonly help: string;
  /** Whether it keeps its entries under --cache-dir (a kind that does not says the flag is unused). */
  readonly usesCacheDir: boolean;
  /** A problem with --storage-capacity-gb (in GiB, 0 = not given) found before anything is made; undefined when fine. */
  capacityProblem(capacityGiB: number): string | undefined;
  /** Problems with the --s3-* flags found before anything is made (an object-store kind); absent: none asked of them. */
  readonly objectStoreProblems?: (o: ObjectStoreOptions | undefined) => string[];
  open(o: StorageOpenOptions): Promise<OpenedStorage>;
}
