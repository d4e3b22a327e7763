-- Per-tenant term statistics for keyword search inside the vector index
-- (production recall: Milvus sparse vectors). One row per (tenant, term,
-- memory) says whether the memory's current version contains the term;
-- the row with term '' is the memory itself and carries its length in
-- terms. A query's IDF weights come from counting live rows by term, the
-- average document length from the '' rows. The indexer writes the rows of
-- a memory version with that version: a retried write inserts the same
-- rows, and the highest version wins, so counts never drift. Terms the new
-- version no longer contains get a row with live = 0. Terms prefixed
-- "entity:" and "task:" count memories carrying an entity or a task type
-- (value holds its canonical form), for query hints.
-- note: memories stored before this migration have no term rows until the
-- next reindex; recall served from the in-process cache does not use them
CREATE TABLE IF NOT EXISTS memory_terms
(
    tenant    LowCardinality(String),
    term      String,
    memory_id String,
    version   UInt32,
    live      UInt8,
    length    UInt32,
    value     String
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (tenant, term, memory_id);
