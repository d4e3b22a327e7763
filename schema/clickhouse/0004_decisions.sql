-- The audit log of every change to semantic memory: merge verdicts with the
-- candidate, the neighbours and their scores, the judge and prompt version,
-- and the exact memory versions before and after (JSON), so that any
-- decision can be explained and undone.
--
-- Append-only and idempotent on (tenant, id): the adapter skips IDs already
-- logged and readers keep the first written row per ID. memory_ids lists
-- every memory the decision mentions (target, before, after) so that
-- forgetting a memory finds, and deletes, every decision that holds its text.
CREATE TABLE IF NOT EXISTS merge_decisions
(
    tenant            LowCardinality(String),
    created_at        DateTime64(3, 'UTC'),
    id                String,
    action            LowCardinality(String),
    workflow_id       String,
    episode_id        String,
    candidate_kind    LowCardinality(String),
    candidate_content String CODEC(ZSTD(3)),
    candidate         String CODEC(ZSTD(3)),
    neighbors         String CODEC(ZSTD(3)),
    verdict           LowCardinality(String),
    target_id         String,
    reason            String CODEC(ZSTD(3)),
    judge             LowCardinality(String),
    model             LowCardinality(String),
    prompt_version    LowCardinality(String),
    before            String CODEC(ZSTD(3)),
    after             String CODEC(ZSTD(3)),
    memory_ids        Array(String),
    undoes            String,
    write_seq         UInt64,

    INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_memory_ids memory_ids TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_workflow workflow_id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (tenant, created_at, id);
