package clickhouse_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
)

// TestClusteredSchemaOnTheEngine checks the clustered form of every schema
// statement on ClickHouse's own parser and table factory, as far as an
// engine without a cluster can go:
//   - every statement, ON CLUSTER and Replicated engines included, must
//     parse: formatQuery() parses without executing, and needs no cluster;
//   - every CREATE TABLE, with its Replicated engine and ON CLUSTER taken
//     out, must get as far as "Can't create replicated table without
//     ZooKeeper" (NO_ZOOKEEPER), which ClickHouse checks only once the
//     engine's arguments (the version column, say), the columns, the
//     sorting key, TTL and settings were all accepted.
//
// What it cannot check: that ON CLUSTER runs (chDB has no remote_servers,
// no Keeper and no distributed DDL queue, and refuses with "cluster not
// found"), and that ALTER TABLE and materialized views work on replicated
// tables, which cannot be created here. TestClusterMigrationsOnServer does
// that when CLICKHOUSE_CLUSTER names a real cluster.
func TestClusteredSchemaOnTheEngine(t *testing.T) {
	ctx := context.Background()
	const cluster = "hindsight_test_cluster"
	s := openChDB(t, "")
	scratch := freshDatabase("cluster")
	mustT(t, s.Exec(ctx, "CREATE DATABASE "+scratch))
	t.Cleanup(func() { s.Exec(context.Background(), "DROP DATABASE IF EXISTS "+scratch) })
	local := openChDB(t, scratch, func(c *chdb.Config) { c.Store.SkipMigrate = true })

	ms, err := chschema.Migrations()
	mustT(t, err)
	stmts := []string{"CREATE DATABASE IF NOT EXISTS `hindsight`", chschema.MigrationsTable, chschema.MigrationLock(1), "DROP TABLE IF EXISTS schema_migration_lock_1"}
	for _, m := range ms {
		stmts = append(stmts, m.Statements...)
	}
	replicated := 0
	for _, stmt := range stmts {
		clustered, err := chschema.OnCluster(stmt, cluster)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		var out bytes.Buffer
		literal := "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(clustered) + "'"
		if err := s.QueryReadOnly(ctx, "SELECT formatQuery("+literal+")", &out, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}); err != nil {
			t.Errorf("the clustered statement does not parse: %v\n%s", err, clustered)
			continue
		}
		if !strings.Contains(out.String(), "ON CLUSTER "+cluster) {
			t.Errorf("formatQuery lost ON CLUSTER: %s", out.String())
		}
		if !strings.HasPrefix(strings.TrimSpace(strings.ToUpper(stripComments(stmt))), "CREATE TABLE") || !strings.Contains(clustered, "Replicated") {
			continue
		}
		replicated++
		one := strings.Replace(clustered, " ON CLUSTER `"+cluster+"`", "", 1)
		one = strings.NewReplacer("{shard}", "01", "{replica}", "r1").Replace(one)
		err = local.Exec(ctx, one)
		if err == nil || !strings.Contains(err.Error(), "NO_ZOOKEEPER") {
			t.Errorf("the replicated table definition = %v, want it refused only for want of ZooKeeper (NO_ZOOKEEPER):\n%s", err, one)
		}
		// The table as it is on one server, for the statements after it.
		mustT(t, local.Exec(ctx, stmt))
	}
	if replicated < 9 {
		t.Errorf("checked %d replicated tables; the schema has at least 9 (schema_migrations and eight of the migrations)", replicated)
	}
}

func stripComments(stmt string) string {
	var b strings.Builder
	for line := range strings.Lines(stmt) {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestClusterMigrationsOnServer migrates a fresh database on the cluster
// CLICKHOUSE_CLUSTER of the server CLICKHOUSE_ADDR, twice, and checks that
// every table came out replicated and every migration was recorded once.
func TestClusterMigrationsOnServer(t *testing.T) {
	addr := serverAddr(t)
	cluster := os.Getenv("CLICKHOUSE_CLUSTER")
	if cluster == "" {
		t.Skip("CLICKHOUSE_CLUSTER is not set: no ClickHouse cluster to test against")
	}
	ctx := context.Background()
	cfg := clickhouse.Config{
		Addr: []string{addr}, Cluster: cluster, Database: freshDatabase("hindsight_cluster_test"),
		Username: os.Getenv("CLICKHOUSE_USER"), Password: os.Getenv("CLICKHOUSE_PASSWORD"),
	}
	s, err := clickhouse.Open(ctx, cfg)
	mustT(t, err)
	t.Cleanup(func() {
		s.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+cfg.Database+"` ON CLUSTER `"+cluster+"` SYNC")
		s.Close()
	})
	mustT(t, s.Migrate(ctx))
	ms, err := chschema.Migrations()
	mustT(t, err)
	applied, err := s.AppliedMigrations(ctx)
	mustT(t, err)
	if len(applied) != len(ms) {
		t.Fatalf("recorded %d migrations, want %d", len(applied), len(ms))
	}
	var out bytes.Buffer
	mustT(t, s.QueryReadOnly(ctx, "SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE 'Replicated%' AND engine != 'MaterializedView' ORDER BY name",
		&out, clickhouse.QueryOptions{Format: clickhouse.FormatTSV}))
	if got := strings.TrimSpace(out.String()); got != "name\tengine" {
		t.Errorf("tables that are not replicated on the cluster:\n%s", got)
	}
}

// TestMigrationLockLeftByADeadProcess leaves the migration lock behind, as
// a process that died while migrating would, with a migration still to
// apply: its last renewal is an hour old, past the lease, so Migrate
// takes it over, applies the migration and releases the lock.
func TestMigrationLockLeftByADeadProcess(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	ms, err := chschema.Migrations()
	mustT(t, err)
	last := ms[len(ms)-1]
	mustT(t, s.Exec(ctx, chschema.MigrationLock(1)))
	mustT(t, s.Exec(ctx, "INSERT INTO schema_migration_lock_1 (holder, at, released) SELECT 'a-dead-process', now64(3) - INTERVAL 1 HOUR, 0"))
	mustT(t, s.Exec(ctx, "DELETE FROM schema_migrations WHERE version = {v:UInt32}", clickhouse.ChNamed("v", uint32(last.Version))))
	mustT(t, s.Migrate(ctx))
	applied, err := s.AppliedMigrations(ctx)
	mustT(t, err)
	if applied[last.Version] != last.Checksum {
		t.Errorf("migration %d after taking over the lock: recorded %q, want %q", last.Version, applied[last.Version], last.Checksum)
	}
	if got := sqlText(t, s, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND startsWith(name, 'schema_migration_lock')", clickhouse.FormatTSV); got != "count()\n0\n" {
		t.Errorf("the lock is still there after Migrate: %q", got)
	}
}
