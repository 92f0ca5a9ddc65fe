// Cache-key formats of the workload, in one place so the engine, traces and tests agree.
// They match the reference (docs/reference-compat.md#rc-26) except that no key embeds wall-clock time.

/** `<convId>_turn_<n>`: one conversation turn's own new tokens. */
export function turnKey(conversationId: string, turn: number): string {
  return `${conversationId}_turn_${turn}`;
}

/** `<userId>_req_<seq:06d>`: a request outside any conversation (multi-turn off). */
export function requestKey(userId: string, seq: number): string {
  return `${userId}_req_${String(seq).padStart(6, '0')}`;
}

/** `conv_<userId>_<n>`: the user's n-th conversation (reference: epoch ms instead of n). */
export function conversationId(userId: string, n: number): string {
  return `conv_${userId}_${n}`;
}

/** `kv_system_<16 hex>`: a shared system-prompt prefix. */
export function systemPromptKey(promptId: string): string {
  return `kv_system_${promptId}`;
}

/** `doc_<i:04d>`: the i-th ingested RAG document. */
export function ragDocumentId(index: number): string {
  return `doc_${String(index).padStart(4, '0')}`;
}

/** `rag_<docId>_chunk_<i>`: one chunk of an ingested document. */
export function ragChunkKey(docId: string, index: number): string {
  return `rag_${docId}_chunk_${index}`;
}

/** `rag_<docId>`: the key of a RAG request's own entry (never written by ingestion). */
export function ragRequestKey(docId: string): string {
  return `rag_${docId}`;
}
