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
