package clickhouse_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// The migration lock between processes: each child is this test binary
// running TestMigrationLockProcess against one engine, which the parent
// serves over loopback HTTP (a chDB directory has one owner), as
// replicas reach one ClickHouse server.

const (
	childAddr  = "HINDSIGHT_LOCK_CHILD_ADDR"
	childDB    = "HINDSIGHT_LOCK_CHILD_DB"
	childLease = "HINDSIGHT_LOCK_CHILD_LEASE"
	childSlow  = "HINDSIGHT_LOCK_CHILD_SLOW"
)

// TestMigrationLockProcess is one process migrating: it prints "holding"
// when it starts applying a migration (which takes HINDSIGHT_LOCK_CHILD_SLOW,
// a slow migration), then "applied N", the migrations it applied itself.
func TestMigrationLockProcess(t *testing.T) {
	addr := os.Getenv(childAddr)
	if addr == "" {
		t.Skip("a child of TestMigrationsAcrossProcesses")
	}
	lease, err := time.ParseDuration(os.Getenv(childLease))
	mustT(t, err)
	slow, err := time.ParseDuration(os.Getenv(childSlow))
	mustT(t, err)
	ctx := context.Background()
	s, err := clickhouse.Open(ctx, clickhouse.Config{Addr: []string{addr}, Protocol: clickhouse.HTTP, Database: os.Getenv(childDB), SkipMigrate: true})
	mustT(t, err)
	defer s.Close()
	s.SetMigrationLease(lease)
	applied := 0
	s.SetBeforeMigration(func(int) {
		applied++
		fmt.Println("holding")
		time.Sleep(slow) // a migration that takes this long
	})
	mustT(t, s.Migrate(ctx))
	fmt.Printf("applied %d\n", applied)
}

type child struct {
	cmd   *exec.Cmd
	lines chan string
}

// startChild runs TestMigrationLockProcess in a new process.
func startChild(t *testing.T, addr, db string, lease, slow time.Duration) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrationLockProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childAddr+"="+addr, childDB+"="+db, childLease+"="+lease.String(), childSlow+"="+slow.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	mustT(t, err)
	mustT(t, cmd.Start())
	c := &child{cmd: cmd, lines: make(chan string, 64)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return c
}

// waitFor reads the child's output up to a line starting with prefix.
func (c *child) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	for line := range c.lines {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("the child ended without printing %q: %v", prefix, c.cmd.Wait())
	return ""
}

// applied waits for the child to end and returns how many migrations it
// applied.
func (c *child) applied(t *testing.T) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(c.waitFor(t, "applied "), "applied %d", &n); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("the child failed: %v", err)
	}
	return n
}

func TestMigrationsAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	owner := openChDB(t, "")
	srv := httptest.NewServer(owner.Handler())
	defer srv.Close()
	addr, db := strings.TrimPrefix(srv.URL, "http://"), owner.Config().Database
	ms, err := chschema.Migrations()
	mustT(t, err)
	last := ms[len(ms)-1]
	pending := func() {
		mustT(t, owner.Exec(ctx, "DELETE FROM schema_migrations WHERE version = {v:UInt32}", clickhouse.ChNamed("v", uint32(last.Version))))
	}
	noLock := func() {
		t.Helper()
		if got := sqlText(t, owner, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND startsWith(name, 'schema_migration_lock')", clickhouse.FormatTSV); got != "count()\n0\n" {
			t.Errorf("a migration lock is left: %q", got)
		}
		applied, err := owner.AppliedMigrations(ctx)
		mustT(t, err)
		if applied[last.Version] != last.Checksum {
			t.Errorf("migration %d is not recorded", last.Version)
		}
	}

	// A holder whose migration outlasts the lease several times renews
	// its lock: the process that waits does not take it over and apply
	// the migration a second time, beside it.
	t.Run("a slow holder keeps its lock", func(t *testing.T) {
		pending()
		const lease = 400 * time.Millisecond
		first := startChild(t, addr, db, lease, 5*lease)
		first.waitFor(t, "holding")
		second := startChild(t, addr, db, lease, 0)
		if n := second.applied(t); n != 0 {
			t.Errorf("the waiting process applied %d migrations while the holder migrated", n)
		}
		if n := first.applied(t); n != 1 {
			t.Errorf("the holder applied %d migrations, want 1", n)
		}
		noLock()
	})

	// A lock left by a dead process is taken over by exactly one of the
	// processes that find it stale: the generation it creates is a
	// compare-and-set, so no two take it over.
	t.Run("a dead process's lock is taken over once", func(t *testing.T) {
		pending()
		mustT(t, owner.Exec(ctx, chschema.MigrationLock(1)))
		mustT(t, owner.Exec(ctx, "INSERT INTO schema_migration_lock_1 (holder, at, released) SELECT 'a-dead-process', now64(3) - INTERVAL 1 HOUR, 0"))
		var kids []*child
		for range 3 {
			kids = append(kids, startChild(t, addr, db, time.Second, 300*time.Millisecond))
		}
		total := 0
		for _, k := range kids {
			total += k.applied(t)
		}
		if total != 1 {
			t.Errorf("%d processes applied the pending migration, want 1", total)
		}
		noLock()
	})
}

// TestOnlyTheHolderReleases: a holder whose lock was taken over (its
// renewals stopped long enough for another process to judge it dead)
// learns it lost the lock, and releasing it then leaves the new holder's
// lock alone.
func TestOnlyTheHolderReleases(t *testing.T) {
	ctx := context.Background()
	s := openChDB(t, "")
	s.SetMigrationLease(150 * time.Millisecond)
	held, release, err := s.MigrationLockFor(ctx)
	mustT(t, err)
	// Another process takes the next generation, as a takeover does.
	mustT(t, s.Exec(ctx, chschema.MigrationLock(2)))
	mustT(t, s.Exec(ctx, "INSERT INTO schema_migration_lock_2 (holder, at, released) SELECT 'another-process', now64(3), 0"))
	select {
	case <-held.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the first holder never learnt that its lock was taken over")
	}
	if cause := context.Cause(held); cause == nil || errors.Is(cause, context.Canceled) || !strings.Contains(cause.Error(), "taken over") {
		t.Errorf("the lost lock's cause: %v", cause)
	}
	release()
	if got := sqlText(t, s, "SELECT holder, released FROM schema_migration_lock_2 ORDER BY at", clickhouse.FormatTSV); got != "holder\treleased\nanother-process\t0\n" {
		t.Errorf("the new holder's lock after the old holder released: %q", got)
	}
}
