// Package index is the write side of memory: the one path by which memory
// versions already decided (by the ledger's planning) reach every place
// they live: the system of record, the vector index, and the caches of
// the readers in this process.
package index
