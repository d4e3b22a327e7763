// Package milvus implements memory.VectorIndex on Milvus, Hindsight's
// production vector store, with github.com/milvus-io/milvus-sdk-go/v2.
//
// The SDK is archived upstream and its client has about ninety methods, so
// it stays inside this package: nothing here exports an SDK type, and moving
// to milvus/client/v2 means changing this package only. The collections
// themselves are specified in schema/milvus.
//
// Open connects and idempotently ensures, for the memories and the episodes
// collection, that the collection exists with the expected fields, that its
// vector index exists, and that it is loaded. A collection whose vectors
// have another dimension than the configured embedder's is refused with an
// error that says to reindex.
//
// It is also a memory.HybridSearcher, and needs Milvus 2.4 or newer for it
// (sparse float vectors): the memories collection keeps each memory's
// keyword vector in a sparse field with an inverted index scored by inner
// product. A hybrid search is a Search of each side at once, a dense one
// (the collection's metric) and a sparse one (IP, nothing dropped), each
// of PerSide hits under the tenant's filter, asking for the scalar fields
// only. Each Search reports its side's own score (Milvus' HybridSearch
// reports only the fused one, and recovering both from it meant shipping
// both vectors of every hit), so memory.JoinHybrid ranks each side and
// orders the union as Milvus' weighted reranker does; a side that did not
// return a hit scores 0 there. A query with one side only sends that
// Search alone.
//
// Milvus before 2.4.12 refuses empty sparse rows, so a memory without
// keywords is stored with the one entry schema.EmptySparseIndex → 0, which
// scores 0 against every query (Milvus' inverted index leaves zero weights
// out, so keyword searches never return it), and is read back as empty.
// Episodes have no sparse field: writing an episode with a sparse vector,
// or searching episodes with a sparse query, is EINVALID. A memories
// collection created before the sparse field existed is refused at Open
// with EINVALID (schema.SparseFieldError): Milvus cannot add a vector
// field, so the index generation must be rebuilt (reindex).
//
// Every expression sent to Milvus comes from one function, buildExpr, which
// always restricts to the tenant and quotes every value. Documents are keyed
// by schema.PrimaryKey(tenant, id), so the same ID in two tenants is two
// documents.
//
// Reads use Strong consistency by default: the worker that distils a
// session writes memories, and the MCP server that answers the next recall
// (another process, another client) must see them. Session consistency only
// covers writes made through the same client, and Bounded may miss the last
// seconds of writes. Bounded is a reasonable choice where that lag is
// acceptable and Strong's extra latency is not.
//
// Tests: the memory/storetest acceptance suite runs through the real SDK
// against milvusfake, an in-process gRPC fake of the Milvus API, and against
// a real Milvus when MILVUS_ADDR (and, if needed, MILVUS_TOKEN) is set.
package milvus
