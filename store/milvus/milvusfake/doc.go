// Package milvusfake is a FAKE Milvus, for tests only. It is an in-process
// gRPC server on a loopback port that implements the handful of
// MilvusService calls the store/milvus adapter makes through the real
// milvus-sdk-go client: Connect; create, describe, drop and load
// collections; create and describe an index; upsert, delete, query and
// search.
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
//     their declared limits, and duplicate primary keys in one upsert.
//
// The expression grammar it understands is a subset of Milvus': || && ! and
// their word forms, parentheses, == != < <= > >= between a field and a
// literal, [not] in with a list, and array_contains / array_contains_any /
// array_contains_all. Anything else is rejected as unparsable, so the
// adapter cannot come to depend on syntax the fake has not checked.
//
// Everything is immediately visible (as with Strong consistency), databases
// and credentials are ignored, and partition-key collections keep all rows
// together. Use a real Milvus (MILVUS_ADDR) to test anything beyond that.
package milvusfake
