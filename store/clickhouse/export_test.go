package clickhouse

import "context"

// Exec runs a statement; tests use it to set up and tear down.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	return s.exec(ctx, "test", query, args...)
}
