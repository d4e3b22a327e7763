// Package clickhouse holds Hindsight's ClickHouse schema: versioned
// migrations as embedded .sql files, applied in order and recorded in the
// schema_migrations table by store/clickhouse (`hindsight migrate`, and every
// service start). The same files run on a ClickHouse server and on the
// embedded chDB engine.
//
// On a ClickHouse cluster (store/clickhouse Config.Cluster) the same files
// run through OnCluster, which adds ON CLUSTER to each statement and turns
// every MergeTree-family engine into its Replicated form. The clustered
// schema is derived, not kept beside the files, so the two cannot drift;
// a statement the rewriter cannot handle fails TestEveryMigrationRunsOnACluster.
//
// Rules for migration files:
//   - Name them NNNN_what.sql; NNNN is the version, strictly increasing.
//   - Never edit a file after it shipped: its checksum is recorded, and a
//     changed file stops Migrate with an error. Add a new file instead.
//   - Every statement must be safe to run twice (IF NOT EXISTS, IF EXISTS),
//     so that a migration interrupted half-way can simply run again.
//   - Statements are separated by ';' at the end of a line. Tables are named
//     without a database: the connection's database is the target.
//   - Tables that hold data use a MergeTree-family engine (replicated on a
//     cluster); statements are CREATE, ALTER TABLE, DROP, TRUNCATE or
//     INSERT, the kinds OnCluster knows how to run on every host.
package clickhouse
