-- Distilled episodes, one per finished session. Hot episodes live in
-- `episodes`; consolidation moves old ones to `episodes_archive` (cold).
--
-- An episode can be rewritten (a session distilled again): rows carry a
-- write_seq and ReplacingMergeTree keeps the latest; readers use FINAL.
-- Failures are kept as three parallel arrays (attempt, cause, event).
CREATE TABLE IF NOT EXISTS episodes
(
    tenant            LowCardinality(String),
    ended_at          DateTime64(3, 'UTC'),
    id                String,
    session_id        String,
    user_id           String,
    agent             LowCardinality(String),
    task              String CODEC(ZSTD(3)),
    task_type         LowCardinality(String),
    entities          Array(String),
    steps             Array(String) CODEC(ZSTD(3)),
    failure_attempts  Array(String) CODEC(ZSTD(3)),
    failure_causes    Array(String) CODEC(ZSTD(3)),
    failure_event_ids Array(String),
    outcome           LowCardinality(String),
    feedback          Array(String) CODEC(ZSTD(3)),
    started_at        DateTime64(3, 'UTC'),
    event_count       UInt32,
    status            LowCardinality(String),
    source_episodes   Array(String),
    extractor         LowCardinality(String),
    created_at        DateTime64(3, 'UTC'),
    retention_days    UInt16,
    write_seq         UInt64,

    INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_entities entities TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_task_ngram lowerUTF8(task) TYPE ngrambf_v1(2, 65536, 2, 0) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(write_seq)
PARTITION BY toYYYYMM(ended_at)
ORDER BY (tenant, ended_at, id)
TTL toDateTime(ended_at) + toIntervalDay(retention_days) WHERE retention_days > 0
SETTINGS index_granularity = 2048;

-- Archived (cold) episodes: same columns plus when they were archived.
-- Stronger compression from the start, and parts older than 90 days are
-- recompressed harder still. On a server with a tiered storage policy, add a
-- `TO VOLUME` clause here to move old parts to cheap disks (see
-- store/clickhouse/README.md).
CREATE TABLE IF NOT EXISTS episodes_archive
(
    tenant            LowCardinality(String),
    ended_at          DateTime64(3, 'UTC'),
    id                String,
    session_id        String,
    user_id           String,
    agent             LowCardinality(String),
    task              String CODEC(ZSTD(6)),
    task_type         LowCardinality(String),
    entities          Array(String),
    steps             Array(String) CODEC(ZSTD(6)),
    failure_attempts  Array(String) CODEC(ZSTD(6)),
    failure_causes    Array(String) CODEC(ZSTD(6)),
    failure_event_ids Array(String),
    outcome           LowCardinality(String),
    feedback          Array(String) CODEC(ZSTD(6)),
    started_at        DateTime64(3, 'UTC'),
    event_count       UInt32,
    status            LowCardinality(String),
    source_episodes   Array(String),
    extractor         LowCardinality(String),
    created_at        DateTime64(3, 'UTC'),
    retention_days    UInt16,
    write_seq         UInt64,
    archived_at       DateTime64(3, 'UTC'),

    INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(write_seq)
PARTITION BY toYYYYMM(ended_at)
ORDER BY (tenant, ended_at, id)
TTL toDateTime(ended_at) + toIntervalDay(retention_days) WHERE retention_days > 0,
    toDateTime(archived_at) + INTERVAL 90 DAY RECOMPRESS CODEC(ZSTD(12));
