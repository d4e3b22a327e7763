-- Raw session events: the append-only bottom layer of lineage.
--
-- Sorted by tenant, then time, so that every query (always scoped to one
-- tenant) reads one contiguous range, and time-range scans prune by the
-- primary key. Partitioned by month of the event time, so retention and
-- forgetting whole months drop parts instead of rewriting them.
--
-- Idempotency: an event is identified by (tenant, id). The adapter skips IDs
-- it finds already stored, readers keep the first written row per ID
-- (LIMIT 1 BY id), and ReplacingMergeTree folds exact retries together in
-- the background, so a retried batch never shows twice.
--
-- retention_days is set per row from the tenant's retention policy at write
-- time (0 keeps the row until it is forgotten); the TTL deletes expired rows.
CREATE TABLE IF NOT EXISTS events
(
    tenant         LowCardinality(String),
    ts             DateTime64(3, 'UTC'),
    session_id     String,
    seq            UInt32,
    id             String,
    user_id        String,
    role           LowCardinality(String),
    content        String CODEC(ZSTD(3)),
    tool_name      LowCardinality(String),
    tool_args      String CODEC(ZSTD(3)),
    tool_result    String CODEC(ZSTD(3)),
    error          String CODEC(ZSTD(3)),
    retention_days UInt16,
    write_seq      UInt64,

    INDEX idx_id id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_session session_id TYPE bloom_filter(0.01) GRANULARITY 1,
    -- Keyword search, Chinese included: code-point bigrams of the lower-cased
    -- text, so a two-character word like 报表 is one n-gram.
    INDEX idx_content_ngram lowerUTF8(content) TYPE ngrambf_v1(2, 65536, 2, 0) GRANULARITY 1,
    -- Whole-word search on space-separated text (hasToken).
    INDEX idx_content_token lowerUTF8(content) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (tenant, ts, session_id, seq, id)
TTL toDateTime(ts) + toIntervalDay(retention_days) WHERE retention_days > 0
SETTINGS index_granularity = 2048;
