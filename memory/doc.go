// Package memory is Hindsight's domain: the types that travel through the
// pipeline (events, transcripts, episodes, semantic memories, queries and
// ranked results), the interfaces the workflows need from the outside world
// (episodic store, vector index, embedder, LLM, extractor, merge judge), the
// pure logic every adapter must agree on (IDs, normalisation, filter
// semantics, confidence and decay), and in-memory reference implementations
// of the store interfaces for tests.
//
// Nothing in this package performs I/O. Adapters live in their own packages
// (store/clickhouse, store/milvus, store/local, llm/openai, llm/offline) and
// are wired together in cmd/hindsight and worker.
package memory
