-- Every version of every semantic memory (append-only), and usage.
--
-- memory_versions is keyed by (tenant, id, version): History is one range
-- read. Rewriting a version (a retried write) leaves one visible copy:
-- ReplacingMergeTree keeps the highest write_seq and readers use FINAL.
-- Memory tables are small next to events and are not partitioned by time:
-- their natural key is the memory, not a moment.
CREATE TABLE IF NOT EXISTS memory_versions
(
    tenant          LowCardinality(String),
    id              String,
    version         UInt32,
    kind            LowCardinality(String),
    content         String CODEC(ZSTD(3)),
    counter_example String CODEC(ZSTD(3)),
    task_type       LowCardinality(String),
    entities        Array(String),
    content_hash    String,
    confidence      Float64,
    sources         Array(String),
    evidence        Array(String),
    status          LowCardinality(String),
    superseded_by   String,
    supersedes      Array(String),
    valid_from      DateTime64(3, 'UTC'),
    valid_to        DateTime64(3, 'UTC'),
    decay           Float64,
    decay_anchor    DateTime64(3, 'UTC'),
    pinned          Bool,
    flags           Array(LowCardinality(String)),
    helped          UInt32,
    hurt            UInt32,
    reason          String,
    decision_id     String,
    created_at      DateTime64(3, 'UTC'),
    updated_at      DateTime64(3, 'UTC'),
    write_seq       UInt64,

    INDEX idx_hash content_hash TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_sources sources TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_content_ngram lowerUTF8(content) TYPE ngrambf_v1(2, 65536, 2, 0) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(write_seq)
ORDER BY (tenant, id, version);

-- The current (highest) version of each memory, maintained on insert by the
-- materialized view below, so that reading current state never scans old
-- versions. ReplacingMergeTree(version) keeps the highest version; when a
-- version is rewritten, the last write wins.
CREATE TABLE IF NOT EXISTS memories_current
(
    tenant          LowCardinality(String),
    id              String,
    version         UInt32,
    kind            LowCardinality(String),
    content         String CODEC(ZSTD(3)),
    counter_example String CODEC(ZSTD(3)),
    task_type       LowCardinality(String),
    entities        Array(String),
    content_hash    String,
    confidence      Float64,
    sources         Array(String),
    evidence        Array(String),
    status          LowCardinality(String),
    superseded_by   String,
    supersedes      Array(String),
    valid_from      DateTime64(3, 'UTC'),
    valid_to        DateTime64(3, 'UTC'),
    decay           Float64,
    decay_anchor    DateTime64(3, 'UTC'),
    pinned          Bool,
    flags           Array(LowCardinality(String)),
    helped          UInt32,
    hurt            UInt32,
    reason          String,
    decision_id     String,
    created_at      DateTime64(3, 'UTC'),
    updated_at      DateTime64(3, 'UTC'),
    write_seq       UInt64,

    INDEX idx_hash content_hash TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_sources sources TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (tenant, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS memories_current_mv TO memories_current AS
SELECT tenant, id, version, kind, content, counter_example, task_type, entities, content_hash,
       confidence, sources, evidence, status, superseded_by, supersedes, valid_from, valid_to,
       decay, decay_anchor, pinned, flags, helped, hurt, reason, decision_id, created_at,
       updated_at, write_seq
FROM memory_versions;

-- Uses of memories (recalled, helped, hurt), kept apart from versions so that
-- recall never writes a version. The sorting key is the whole entry, so a
-- recorded use stored twice folds into one; readers count distinct times.
CREATE TABLE IF NOT EXISTS memory_usage
(
    tenant    LowCardinality(String),
    memory_id String,
    kind      LowCardinality(String),
    at        DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(at)
ORDER BY (tenant, memory_id, kind, at);
