// Package storetest holds the acceptance suites every implementation of the
// memory store interfaces must pass: the in-memory references, the embedded
// engines (chDB, the local vector index) and, when their addresses are set,
// the real servers (ClickHouse, Milvus). One suite per interface, run
// against every backend, keeps their semantics identical.
package storetest
