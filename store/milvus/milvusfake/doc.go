// Package milvusfake is a FAKE Milvus, for tests only. It is an in-process
// gRPC server on a loopback port that implements the handful of
// MilvusService calls the store/milvus adapter makes through the real
// milvus-sdk-go client: Connect; create, describe, drop and load
// collections; create and describe indexes; upsert, delete, query, search
// and hybrid search.
//
// Collections may hold float vector fields and sparse float vector fields
// (up to four vector fields, as Milvus allows). Sparse rows travel as the
// SDK encodes them, schemapb.SparseFloatArray: each row little-endian
// (uint32 index, float32 value) pairs, with the array's dim one past the
// largest index. Dense fields take the dense index types with L2, IP or
// COSINE; sparse fields SPARSE_INVERTED_INDEX or SPARSE_WAND with IP only.
// A sparse search scores the rows that share a term with the query (a
// non-zero weight at one of its indices, as an inverted index holds them)
// by inner product. HybridSearch runs each sub-search (one query vector
// each) and fuses them as Milvus 2.4's proxy does: rrf (1/(k+rank), k = 60
// without a strategy) or weighted, whose weights apply to each side's
// score squashed into [0, 1] ((1+s)/2 for COSINE, 1/2+atan(s)/π for IP,
// 1-2·atan(s)/π for L2); scores of one primary key add up, ties go by
// primary key, then offset, limit and round_decimal apply. Search results
// carry vector output fields, dense and sparse.
//
// It keeps rows in memory and searches exactly (every row is scored), so it
// says nothing about Milvus' speed or approximate recall. What it is
// faithful to is the contract the adapter depends on, including the errors
// a real Milvus 2.4 returns, with the same codes and wording:
//
//   - searching or querying a collection that is not loaded
//     ("collection not loaded[collection=…]", code 101);
//   - a query vector whose dimension differs from the collection's
//     ("vector dimension mismatch, expected vector size(byte) …", code 2000),
//     and rows whose vectors do (code 1100);
//   - an expression outside the grammar the adapter emits
//     ("failed to create query plan: cannot parse expression: …", code 1100);
//   - unknown collections, missing indexes, VarChar and Array values over
//     their declared limits, and duplicate primary keys in one upsert;
//   - sparse rows that are empty (Milvus before 2.4.12 refuses them:
//     "empty sparse float vector row"), unsorted, repeat an index, use
//     index 2^32-1, or hold NaN or infinity;
//   - a sparse index with another metric than IP ("metric type not found
//     or not supported, supported: [IP]"), dense index types on sparse
//     fields and sparse ones on dense fields;
//   - a search's placeholder of the other vector type ("vector type must
//     be the same, field … - type VECTOR_SPARSE_FLOAT, search info type
//     VECTOR_FLOAT"), an unknown anns_field, a metric other than the
//     index's, and hybrid searches whose weights do not match the number of
//     sub-searches ("the length of weights param mismatch with ann search
//     requests"), whose sub-searches have several query vectors, or whose
//     rank parameters are out of range.
//
// The expression grammar it understands is a subset of Milvus': || && ! and
// their word forms, parentheses, == != < <= > >= between a field and a
// literal, [not] in with a list, and array_contains / array_contains_any /
// array_contains_all. Anything else is rejected as unparsable, so the
// adapter cannot come to depend on syntax the fake has not checked.
//
// Everything is immediately visible (as with Strong consistency), databases
// and credentials are ignored, and partition-key collections keep all rows
// together. Calls and LastHybridSearch let tests check what a client sent.
// Use a real Milvus (MILVUS_ADDR) to test anything beyond that.
package milvusfake
