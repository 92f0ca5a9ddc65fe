// RAG documents (docs/reference-compat.md#rc-30): plans the ingestion of documents as chunk entries, and retrieval of
// top-k chunks (zipfian or uniform, without replacement). Pure planning: the engine writes, reads
// and deletes the keys. Reference bug (docs/reference-compat.md#rc-30): evicting a document (maxDocuments > 0) called a
// missing cache.delete, so chunks were never removed; here ingest returns the evicted document so
// the engine really deletes its chunk keys.
import type { Rng } from '../util/rng.js';
import { kvBytesPerToken } from '../model/models.js';
import type { ModelConfig } from '../model/models.js';
import { DEFAULT_SETTINGS } from '../settings/config-keys.js';
import type { RagSettings } from '../settings/config-keys.js';
import type { RetrievalDistribution } from '../settings/choices.js';
import { ragChunkKey, ragDocumentId } from './keys.js';

export interface RagChunk {
  readonly key: string;
  readonly docId: string;
  readonly index: number;
  readonly tokens: number;
}

export interface RagDocument {
  readonly docId: string;
  readonly totalTokens: number;
  readonly chunks: readonly RagChunk[];
}

export interface IngestPlan {
  /** The new document: write every chunk entry. */
  readonly document: RagDocument;
  /** The oldest document removed by maxDocuments: delete every chunk entry. */
  readonly evicted?: RagDocument;
}

export interface RagRetrieval {
  readonly docId: string;
  readonly chunks: readonly RagChunk[];
  readonly totalTokens: number;
}

/** What a session needs to draw RAG work: the manager implements it. */
export interface RagSource {
  pickDocument(rng: Rng): RagDocument | undefined;
  retrieve(doc: RagDocument, rng: Rng): RagRetrieval;
}

/** "Large model" (shorter documents): hidden ≥ 8192 or layers ≥ 64. */
export function isLargeModel(m: Pick<ModelConfig, 'hiddenDim' | 'numLayers'>): boolean {
  return m.hiddenDim >= 8192 || m.numLayers >= 64;
}

/** max(1, min(chunkSizeTokens, floor(maxChunkBytes / bpt))). */
export function tokensPerChunk(settings: Pick<RagSettings, 'chunkSizeTokens' | 'maxChunkBytes'>, bytesPerToken: number): number {
  return Math.max(1, Math.min(settings.chunkSizeTokens, Math.floor(settings.maxChunkBytes / bytesPerToken)));
}

/** Full chunks of `perChunk` tokens, the last one holding the remainder. */
export function chunkDocument(docId: string, totalTokens: number, perChunk: number): RagChunk[] {
  const chunks: RagChunk[] = [];
  for (let i = 0, start = 0; start < totalTokens; i++, start += perChunk) {
    chunks.push({ key: ragChunkKey(docId, i), docId, index: i, tokens: Math.min(perChunk, totalTokens - start) });
  }
  return chunks;
}

/** Unnormalised retrieval weights of chunk i: 1/(i+1) for zipfian, 1 for uniform. */
export function retrievalWeights(n: number, dist: RetrievalDistribution): number[] {
  return Array.from({ length: n }, (_, i) => (dist === 'zipfian' ? 1 / (i + 1) : 1));
}

/**
 * min(k, n) distinct indices, drawn one after another in proportion to the remaining weights
 * (what numpy's choice(replace=False, p=…) does).
 */
export function sampleWithoutReplacement(weights: readonly number[], k: number, rng: Rng): number[] {
  const remaining = weights.map((w, i) => ({ w, i }));
  const out: number[] = [];
  while (out.length < k && remaining.length > 0) {
    // Recomputing the total each pick avoids drift from repeated float subtraction.
    let u = rng.random() * remaining.reduce((a, r) => a + r.w, 0);
    let j = 0;
    for (; j < remaining.length - 1; j++) {
      const w = remaining[j]?.w ?? 0;
      if (u < w) break;
      u -= w;
    }
    const [picked] = remaining.splice(j, 1);
    if (picked === undefined) break;
    out.push(picked.i);
  }
  return out;
}

/**
 * The ingested documents. Only each document's token count is kept (8 bytes a document): ids are
 * `doc_<i>` in ingestion order and chunks follow from the count, so a document is rebuilt when it is
 * asked for. Holding every document's chunk objects and keys made `--rag-num-docs 1000000` hold
 * gigabytes; picking a document no longer lists every id either.
 */
export class RagDocumentManager implements RagSource {
  readonly bytesPerToken: number;
  readonly tokensPerChunk: number;
  readonly largeModel: boolean;
  /** Total tokens of document i (its index in ingestion order); documents before `oldest` were evicted. */
  private readonly totals: number[] = [];
  private oldest = 0;

  constructor(
    model: ModelConfig,
    private readonly settings: RagSettings = DEFAULT_SETTINGS.rag,
  ) {
    this.bytesPerToken = kvBytesPerToken(model);
    this.tokensPerChunk = tokensPerChunk(settings, this.bytesPerToken);
    this.largeModel = isLargeModel(model);
  }

  get documentCount(): number {
    return this.totals.length - this.oldest;
  }

  /** Ids of the ingested documents, oldest first. */
  documentIds(): string[] {
    return Array.from({ length: this.documentCount }, (_, i) => ragDocumentId(this.oldest + i));
  }

  getDocument(docId: string): RagDocument | undefined {
    const m = /^doc_(\d+)$/.exec(docId);
    const index = m === null ? -1 : Number(m[1]);
    if (index < this.oldest || index >= this.totals.length || ragDocumentId(index) !== docId) return undefined;
    return this.documentAt(index);
  }

  private documentAt(index: number): RagDocument {
    const docId = ragDocumentId(index);
    const totalTokens = this.totals[index] ?? 0;
    return { docId, totalTokens, chunks: chunkDocument(docId, totalTokens, this.tokensPerChunk) };
  }

  /** Plan the next document `doc_<i:04d>`; it is registered at once (retrievable from now on). */
  ingest(rng: Rng): IngestPlan {
    const s = this.settings;
    const [lo, hi] = this.largeModel
      ? [s.largeModelDocTokensMin, s.largeModelDocTokensMax]
      : [s.smallModelDocTokensMin, s.smallModelDocTokensMax];
    const index = this.totals.length;
    const totalTokens = rng.int(lo, hi);
    const evicted = this.settings.maxDocuments > 0 && this.documentCount >= this.settings.maxDocuments ? this.evictOldest() : undefined;
    this.totals.push(totalTokens);
    const planned = this.documentAt(index);
    return evicted === undefined ? { document: planned } : { document: planned, evicted };
  }

  /** Plans for `n` documents in order. */
  planIngest(n: number, rng: Rng): IngestPlan[] {
    return Array.from({ length: n }, () => this.ingest(rng));
  }

  /** A uniformly chosen ingested document, or undefined before any ingestion (one draw, as rng.pick over the ids). */
  pickDocument(rng: Rng): RagDocument | undefined {
    const n = this.documentCount;
    if (n === 0) return undefined;
    return this.documentAt(this.oldest + Math.floor(rng.random() * n));
  }

  /** Top-k chunks of `doc` (min(topK, chunks) distinct ones) by the configured distribution. */
  retrieve(doc: RagDocument, rng: Rng): RagRetrieval {
    const weights = retrievalWeights(doc.chunks.length, this.settings.retrievalDistribution);
    const chunks = sampleWithoutReplacement(weights, this.settings.topKChunks, rng).flatMap((i) => {
      const c = doc.chunks[i];
      return c === undefined ? [] : [c];
    });
    return { docId: doc.docId, chunks, totalTokens: chunks.reduce((a, c) => a + c.tokens, 0) };
  }

  /** pickDocument + retrieve. */
  retrieveRandom(rng: Rng): RagRetrieval | undefined {
    const doc = this.pickDocument(rng);
    return doc === undefined ? undefined : this.retrieve(doc, rng);
  }

  private evictOldest(): RagDocument | undefined {
    if (this.documentCount === 0) return undefined;
    return this.documentAt(this.oldest++);
  }
}
