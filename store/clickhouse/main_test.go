package clickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
)

// Every test of this package runs on one chDB data directory (the engine
// allows one per process); tests are isolated by database.
var dataDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hindsight-chdb-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dataDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// libPath is the chDB library the tests load: HINDSIGHT_CHDB_LIB, or where
// `make chdb` puts it.
func libPath(t testing.TB) string {
	p, err := chdb.LibPathFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var dbSeq atomic.Int64

// freshDatabase names a database no other test uses.
func freshDatabase(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), dbSeq.Add(1))
}

// openChDB opens a store on the shared chDB directory, in a new database
// unless db is given. The library must be there: a missing library fails
// the test with the command that fetches it, it never skips.
func openChDB(t testing.TB, db string, mutate ...func(*chdb.Config)) *chdb.Store {
	t.Helper()
	if db == "" {
		db = freshDatabase("t")
	}
	cfg := chdb.Config{DataDir: dataDir, LibPath: libPath(t), Store: clickhouse.Config{Database: db}}
	for _, f := range mutate {
		f(&cfg)
	}
	s, err := chdb.Open(context.Background(), cfg)
	if errors.Is(err, chdb.ErrLibraryMissing) {
		t.Fatalf("the chDB acceptance tests need libchdb.so: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// serverAddr is a real ClickHouse server to test against, if any.
func serverAddr(t testing.TB) string {
	addr := os.Getenv("CLICKHOUSE_ADDR")
	if addr == "" {
		t.Skip("CLICKHOUSE_ADDR is not set: no ClickHouse server to test against")
	}
	return addr
}

// openServer opens a store on the server in a new database, over protocol.
func openServer(t testing.TB, protocol clickhouse.Protocol) *clickhouse.Store {
	t.Helper()
	cfg := clickhouse.Config{
		Addr:     []string{serverAddr(t)},
		Protocol: protocol,
		Database: freshDatabase("hindsight_test"),
		Username: os.Getenv("CLICKHOUSE_USER"),
		Password: os.Getenv("CLICKHOUSE_PASSWORD"),
	}
	if protocol == clickhouse.HTTP {
		if a := os.Getenv("CLICKHOUSE_HTTP_ADDR"); a != "" {
			cfg.Addr = []string{a}
		} else {
			t.Skip("CLICKHOUSE_HTTP_ADDR is not set: no ClickHouse HTTP endpoint to test against")
		}
	}
	s, err := clickhouse.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+s.Config().Database+"`")
		s.Close()
	})
	return s
}
