// Package recall finds the memories that answer a query: hybrid retrieval
// (vector similarity and BM25 keyword search over a CJK-aware tokenizer,
// fused by normalised scores or by reciprocal rank), a rerank that weighs relevance, recency,
// confidence and usage, query understanding without an LLM (time
// expressions in English and Chinese become time filters; entity and
// task-type hints), provenance from the source episodes, and a compact text
// block an agent can put in its prompt.
//
// An Engine serves recall in one of two ways. Stateless (Config.Stateless,
// production with Milvus; see stateless.go) it runs one hybrid search of
// the vector index over dense and BM25 sparse vectors (package
// bm25), weighted by the tenant's term statistics in the store, and
// reads only the best candidates from the store by ID: any replica
// answers any tenant with no warm-up. Cached (the default: `hindsight
// dev`, one machine), it keeps, per tenant, an in-process keyword
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
//
// Query understanding. Without an LLM, ParseTime reads a time expression
// in English or Chinese ("last week", "in March", "3 days ago", "上周三",
// "三天前", "去年", "October 13, 2023", "the week before August 3") relative
// to Deps.Clock in Config.Location and removes it from the matched text;
// by default (TimeFilter) it becomes the time range, and when nothing was
// created in that range the range is dropped and Parsed says so. Known
// entities and task types of the tenant, quoted phrases and file names
// named in the text are hints: they lift the memories that carry them and
// exclude none. With Config.LLMQueryParsing the query LLM does the parsing
// and the rules are the fallback.
//
// Ranking. Each source yields at most 50 candidates. Their scores are
// fused (Config.Fusion), optionally widened by a context window over each
// episode's memories (Config.Context), then reranked by
// Weights.Relevance·fused + Recency·recency + Confidence·confidence +
// Usage·usage (0.6 / 0.2 / 0.15 / 0.05 by default); every result carries
// that breakdown.
//
// Output. A result is the current memory version (ID, kind, content,
// confidence, dates, status, sources), its score breakdown, the provenance
// of its source episodes (task, outcome, end date), the other results it
// conflicts with (Deps.Conflicts, DefaultConflicts by default), and, only
// with Query.WithEvents, the event IDs behind it: the memory's evidence, or
// the events of its source sessions. Response.Text is a compact numbered
// block for a prompt that says the memories are reference data, not
// instructions, and flags conflicts, superseded and instruction-like
// memories. Each recall is counted as usage in the background, never on
// the request path.
package recall
