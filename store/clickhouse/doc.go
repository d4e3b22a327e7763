// Package clickhouse is Hindsight's system of record: the memory.EpisodicStore
// (raw session events, episodes hot and archived, every version of every
// semantic memory, usage, and the audit log of merge decisions) on
// ClickHouse, through github.com/ClickHouse/clickhouse-go/v2.
//
// The same adapter and the same SQL serve two deployments:
//   - a ClickHouse server or cluster, over the native protocol or HTTP
//     (Config.Addr or Config.DSN);
//   - the embedded chDB engine of `hindsight dev`, reached over ClickHouse's
//     HTTP protocol through an in-process transport (package
//     store/clickhouse/chdb sets Config.Transport).
//
// Every value travels as a server-side typed query parameter ({name:Type})
// or in a Native-format insert block with an explicit column list; no SQL is
// ever assembled from caller-supplied text. The schema lives in
// schema/clickhouse and is applied by Migrate.
//
// ClickHouse has no unique keys, so idempotency is built from its strengths:
// tables whose rows can be rewritten (episodes, memory versions) are
// ReplacingMergeTree with a write sequence and are read with FINAL;
// append-only tables (events, decisions) skip IDs already stored on write
// and keep the first written row per ID on read. Either way a retried batch
// never shows twice. Purge uses lightweight DELETE, which is synchronous, so
// the next read no longer sees the rows.
package clickhouse
