// Package local is the embedded vector index: a memory.VectorIndex that
// keeps its data in a directory, for `hindsight dev` and single-machine
// deployments where running Milvus is not worth it. It selects documents
// exactly as memory.VectorFilter.Match does, like every index.
//
// Data is partitioned by collection and tenant. A partition is searched
// exactly while it holds at most Config.ExactThreshold documents; past
// that, through an HNSW graph (hnsw.go) that is maintained incrementally
// from the first document, so crossing the threshold costs nothing. Filters
// are applied during the graph search (nodes that fail the filter are
// walked through but not returned); when a filter's estimated matches are
// few, or the graph search has to visit too much of the partition to find
// enough matches, the search scans exactly instead.
//
// It is also a memory.HybridSearcher (hybrid.go): the dense side of a
// hybrid search is the search above, the sparse (keyword) side an exact
// scan of the partition's documents that pass the filter, scoring each
// document's sparse vector against the query's. Both scores of every
// candidate are then computed exactly (cosine from the stored vector, the
// dot product from the stored sparse vector) and memory.UnionHybrid ranks
// and orders the union.
//
// Durability: every write is appended to a checksummed write-ahead log and
// fsynced before it is acknowledged (wal.go). A background checkpoint
// snapshots changed partitions, graph included, and deletes the log they
// cover (snapshot.go); Open loads the snapshots and replays the log after
// them, dropping a torn record at its end, which can only be an
// unacknowledged write. A kill -9 therefore loses nothing that was
// acknowledged; TestCrashKeepsAcknowledgedWrites proves it with a child
// process.
//
// Formats: a document's sparse vector is encoded behind a flag bit that
// logs and snapshots written before sparse vectors existed leave clear, so
// they load unchanged (snapshot version 2, TestOpensVersion2); snapshots
// are written as version 3. An older binary refuses version 3 snapshots
// and cannot read log records of documents with sparse vectors: going back
// to one means rebuilding the index.
//
// Deleting a document, or changing its vector, leaves a tombstone in the
// graph, which searches route through but never return; a checkpoint
// rebuilds a partition's graph once tombstones reach a quarter of it.
// Updates that keep the vector (status, confidence, decay, recall count)
// change the document in place.
//
// Concurrency: searches share a partition's read lock; a writer holds the
// partition's write lock only while applying a change in memory, never
// while waiting for the disk.
package local
