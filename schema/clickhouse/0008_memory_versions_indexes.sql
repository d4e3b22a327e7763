-- memory_versions keeps every version, for history and undo, and is only
-- ever read by memory (tenant, id: its sorting key). Current state is read
-- from memories_current, which keeps its own indexes on the content hash
-- and the sources. The three skip indexes memory_versions was created with
-- served no query, yet every insert wrote two files per index into its
-- part: on small inserts, file creation is most of an insert's time.
ALTER TABLE memory_versions
    DROP INDEX IF EXISTS idx_hash,
    DROP INDEX IF EXISTS idx_sources,
    DROP INDEX IF EXISTS idx_content_ngram;
