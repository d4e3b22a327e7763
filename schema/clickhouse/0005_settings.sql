-- Deployment-wide settings that every process must agree on, such as the
-- vector index generation that recall reads (see the Reindex workflow).
-- Not per tenant. The latest write of a key wins: ReplacingMergeTree keeps
-- the row with the highest write_seq, and readers use FINAL.
CREATE TABLE IF NOT EXISTS settings
(
    key        String,
    value      String,
    updated_at DateTime64(3, 'UTC'),
    write_seq  UInt64
)
ENGINE = ReplacingMergeTree(write_seq)
ORDER BY key;
