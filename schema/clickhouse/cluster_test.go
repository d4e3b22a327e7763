package clickhouse

import (
	"regexp"
	"strings"
	"testing"
)

const rep = `'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'`

func TestOnCluster(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"table, engine without arguments",
			"CREATE TABLE IF NOT EXISTS events\n(\n    id String\n)\nENGINE = ReplacingMergeTree\nORDER BY id",
			"CREATE TABLE IF NOT EXISTS events ON CLUSTER `c1`\n(\n    id String\n)\nENGINE = ReplicatedReplacingMergeTree(" + rep + ")\nORDER BY id"},
		{"table, engine with a version column",
			"CREATE TABLE IF NOT EXISTS episodes (id String, write_seq UInt64) ENGINE = ReplacingMergeTree(write_seq) ORDER BY id",
			"CREATE TABLE IF NOT EXISTS episodes ON CLUSTER `c1` (id String, write_seq UInt64) ENGINE = ReplicatedReplacingMergeTree(" + rep + ", write_seq) ORDER BY id"},
		{"table, empty parentheses",
			"CREATE TABLE t (x UInt8) ENGINE = MergeTree() ORDER BY x",
			"CREATE TABLE t ON CLUSTER `c1` (x UInt8) ENGINE = ReplicatedMergeTree(" + rep + ") ORDER BY x"},
		{"summing, no equals sign, lower-case keywords",
			"create table if not exists s (k String, n UInt64) engine SummingMergeTree(n) order by k",
			"create table if not exists s ON CLUSTER `c1` (k String, n UInt64) engine ReplicatedSummingMergeTree(" + rep + ", n) order by k"},
		{"leading comments, quoted and qualified names, a column named engine",
			"-- a table; with a note\n/* (ENGINE = Log) */ CREATE TABLE IF NOT EXISTS `db`.`odd name` (engine String, x UInt8 DEFAULT (1)) ENGINE = AggregatingMergeTree ORDER BY x",
			"-- a table; with a note\n/* (ENGINE = Log) */ CREATE TABLE IF NOT EXISTS `db`.`odd name` ON CLUSTER `c1` (engine String, x UInt8 DEFAULT (1)) ENGINE = ReplicatedAggregatingMergeTree(" + rep + ") ORDER BY x"},
		{"table with a UUID",
			"CREATE TABLE t UUID '0f2c1f7e-4a8b-4d2e-9c3a-1b2c3d4e5f60' (x UInt8) ENGINE = MergeTree ORDER BY x",
			"CREATE TABLE t UUID '0f2c1f7e-4a8b-4d2e-9c3a-1b2c3d4e5f60' ON CLUSTER `c1` (x UInt8) ENGINE = ReplicatedMergeTree(" + rep + ") ORDER BY x"},
		{"the migration lock: Memory stays Memory, on every host",
			MigrationLock(7),
			"CREATE TABLE schema_migration_lock_7 ON CLUSTER `c1` (holder String, at DateTime64(3, 'UTC'), released UInt8) ENGINE = Memory"},
		{"an engine already replicated is left alone",
			"CREATE TABLE t (x UInt8) ENGINE = ReplicatedMergeTree('/p', 'r') ORDER BY x",
			"CREATE TABLE t ON CLUSTER `c1` (x UInt8) ENGINE = ReplicatedMergeTree('/p', 'r') ORDER BY x"},
		{"create as select: the engine before AS is replicated, the query untouched",
			"CREATE TABLE t ENGINE = MergeTree ORDER BY x AS SELECT 1 AS x, 'MergeTree' AS engine",
			"CREATE TABLE t ON CLUSTER `c1` ENGINE = ReplicatedMergeTree(" + rep + ") ORDER BY x AS SELECT 1 AS x, 'MergeTree' AS engine"},
		{"materialized view into a table",
			"CREATE MATERIALIZED VIEW IF NOT EXISTS memories_current_mv TO memories_current AS\nSELECT tenant, engine FROM memory_versions",
			"CREATE MATERIALIZED VIEW IF NOT EXISTS memories_current_mv ON CLUSTER `c1` TO memories_current AS\nSELECT tenant, engine FROM memory_versions"},
		{"materialized view with its own storage",
			"CREATE MATERIALIZED VIEW v ENGINE = SummingMergeTree ORDER BY k AS SELECT k, count() AS n FROM t GROUP BY k",
			"CREATE MATERIALIZED VIEW v ON CLUSTER `c1` ENGINE = ReplicatedSummingMergeTree(" + rep + ") ORDER BY k AS SELECT k, count() AS n FROM t GROUP BY k"},
		{"plain view",
			"CREATE OR REPLACE VIEW v AS SELECT * FROM t",
			"CREATE OR REPLACE VIEW v ON CLUSTER `c1` AS SELECT * FROM t"},
		{"database",
			"CREATE DATABASE IF NOT EXISTS `hindsight`",
			"CREATE DATABASE IF NOT EXISTS `hindsight` ON CLUSTER `c1`"},
		{"alter",
			"ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS scope LowCardinality(String) DEFAULT 'shared' AFTER version",
			"ALTER TABLE memory_versions ON CLUSTER `c1` ADD COLUMN IF NOT EXISTS scope LowCardinality(String) DEFAULT 'shared' AFTER version"},
		{"drop view", "DROP VIEW IF EXISTS memories_current_mv", "DROP VIEW IF EXISTS memories_current_mv ON CLUSTER `c1`"},
		{"drop table, synchronously", "DROP TABLE IF EXISTS schema_migration_lock SYNC", "DROP TABLE IF EXISTS schema_migration_lock ON CLUSTER `c1` SYNC"},
		{"truncate", "TRUNCATE TABLE IF EXISTS db.t", "TRUNCATE TABLE IF EXISTS db.t ON CLUSTER `c1`"},
		{"truncate without TABLE", "TRUNCATE t", "TRUNCATE t ON CLUSTER `c1`"},
		{"insert runs on one host", "INSERT INTO settings (key, value) SELECT 'a', 'b'", "INSERT INTO settings (key, value) SELECT 'a', 'b'"},
	} {
		got, err := OnCluster(tc.in, "c1")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestOnClusterRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, cluster, says string }{
		{"a select", "SELECT 1", "c1", "cannot run this statement on a cluster"},
		{"optimize", "OPTIMIZE TABLE t FINAL", "c1", "cannot run this statement on a cluster"},
		{"a temporary table", "CREATE TEMPORARY TABLE t (x UInt8)", "c1", "cannot run this statement on a cluster"},
		{"a cluster named already", "ALTER TABLE t ON CLUSTER other ADD COLUMN y UInt8", "c1", "already names a cluster"},
		{"a table without an engine", "CREATE TABLE t AS other", "c1", "without an ENGINE clause"},
		{"a broken IF NOT EXISTS", "CREATE TABLE IF EXISTS t (x UInt8) ENGINE = Log", "c1", "cannot run this statement"},
		{"a cluster name that would break out of its quotes", "DROP VIEW v", "c`; DROP DATABASE x; --", "cluster name"},
		{"an empty cluster name", "DROP VIEW v", "", "cluster name"},
	} {
		_, err := OnCluster(tc.in, tc.cluster)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: OnCluster(%q) = %v, want an error saying %q", tc.name, tc.in, err, tc.says)
		}
	}
}

// onClusterRE and replicatedRE match what OnCluster inserts, so that
// removing them must give back the statement as written.
var (
	onClusterRE  = regexp.MustCompile(" ON CLUSTER `c1`")
	replicatedRE = regexp.MustCompile(`(ENGINE\s*=?\s*)Replicated(\w*MergeTree)(?:\(` + regexp.QuoteMeta(rep) + `\)|\(` + regexp.QuoteMeta(rep) + `, )`)
)

// TestEveryMigrationRunsOnACluster rewrites every embedded migration and
// the statements around them: each must rewrite, name the cluster once,
// replicate every table that holds data, and change nothing else.
func TestEveryMigrationRunsOnACluster(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{MigrationsTable}
	for _, m := range ms {
		stmts = append(stmts, m.Statements...)
	}
	for _, st := range stmts {
		got, err := OnCluster(st, "c1")
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if n := strings.Count(got, "ON CLUSTER"); n != 1 {
			t.Errorf("clustered statement names the cluster %d times:\n%s", n, got)
		}
		upper := strings.ToUpper(st)
		if strings.Contains(upper, "CREATE TABLE") {
			// Every table of the schema holds data, so every one must be
			// of the MergeTree family and come out replicated: a Memory or
			// Log table would hold different rows on each host.
			if !regexp.MustCompile(`ENGINE = Replicated\w*MergeTree\('/clickhouse/tables/\{shard\}/\{database\}/\{table\}', '\{replica\}'`).MatchString(got) {
				t.Errorf("a table of the schema is not replicated on a cluster:\n%s", got)
			}
		}
		back := onClusterRE.ReplaceAllString(got, "")
		back = replicatedRE.ReplaceAllStringFunc(back, func(m string) string {
			sub := replicatedRE.FindStringSubmatch(m)
			if strings.HasSuffix(m, ")") {
				return sub[1] + sub[2]
			}
			return sub[1] + sub[2] + "("
		})
		if back != st {
			t.Errorf("the rewrite changed more than ON CLUSTER and the engine:\n got %s\nfrom %s", got, st)
		}
	}
}
