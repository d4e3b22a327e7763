package clickhouse

import (
	"context"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// Exec runs a statement; tests use it to set up and tear down.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	return s.exec(ctx, "test", query, args...)
}

// chNamed is clickhouse.Named for the external tests.
var ChNamed = ch.Named

// SkewClock moves the store's clock by d, as on a machine whose clock is
// off.
func (s *Store) SkewClock(d time.Duration) {
	s.clock = func() time.Time { return time.Now().Add(d) }
}

// SetMigrationLease sets how old a migration lock must be to be taken over.
func (s *Store) SetMigrationLease(d time.Duration) { s.lease = d }

// BoundCache sets the memory cache's bounds until the test ends.
func BoundCache(t testing.TB, tenants, memories, ids int) {
	old := [3]int{cacheTenants, cacheMemories, cacheIDs}
	cacheTenants, cacheMemories, cacheIDs = tenants, memories, ids
	t.Cleanup(func() { cacheTenants, cacheMemories, cacheIDs = old[0], old[1], old[2] })
}

// SetBeforeMigration runs f before each migration s applies.
func (s *Store) SetBeforeMigration(f func(version int)) { s.beforeMigration = f }

// MigrationLockFor takes the migration lock as Migrate does, for tests of
// the lock itself.
func (s *Store) MigrationLockFor(ctx context.Context) (context.Context, func(), error) {
	return s.migrationLock(ctx, func() (bool, error) { return false, nil })
}
