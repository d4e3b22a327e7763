// Package recall finds the memories that answer a query: hybrid retrieval
// (vector similarity and BM25 keyword search over a CJK-aware tokenizer,
// fused by normalised scores or by reciprocal rank), a rerank that weighs relevance, recency,
// confidence and usage, query understanding without an LLM (time
// expressions in English and Chinese become time filters; entity and
// task-type hints), provenance from the source episodes, and a compact text
// block an agent can put in its prompt.
//
// An Engine serves recall. It keeps, per tenant, an in-process keyword
// index that also caches the current version of every recallable memory, so
// the hot path needs the vector index and no round trip to the system of
// record. The cache is built lazily from MemoryStore.Memories, kept fresh by
// writes through this process's Indexer, and catches up with writes of
// other processes from the store's change feed (Memories with UpdatedAfter)
// at most every Config.RefreshInterval, or at once on Refresh.
//
// An Indexer is the one write path for memory versions decided by the merge
// step: the system of record, the vector index (embedding only new or
// changed text) and the engine's keyword cache. The service's activities
// and the LoCoMo evaluation both use it.
//
// Filters. The tenant is always applied. Kinds, task type, entities (any
// of, compared after memory.NormalizeEntity), minimum confidence and the
// time range narrow both candidate sources alike: the keyword side applies
// memory.VectorFilter.Match to the cached version, the same predicate every
// VectorIndex implements. The time range (Query.Since inclusive,
// Query.Until exclusive) bounds Memory.CreatedAt, the creation time of a
// memory's first version, which VectorDoc.CreatedAt mirrors. Live memories
// are returned by default; IncludeCold adds cold ones, IncludeSuperseded
// superseded ones; archived and forgotten memories never are.
package recall
