//go:build !(linux && amd64)

package chdb

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// ErrLibraryMissing is wrapped by the error Open returns when the engine
// cannot be loaded.
var ErrLibraryMissing = errors.New("chdb: libchdb.so not available")

// Store is the adapter on the embedded engine; see the linux/amd64 build.
type Store struct{ *clickhouse.Store }

// Open fails: @chdb/lib-linux-x64-gnu is built for Linux x86-64 only.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	return nil, fmt.Errorf("%w on %s/%s: the embedded engine needs linux/amd64; point Hindsight at a ClickHouse server instead (CLICKHOUSE_ADDR)",
		ErrLibraryMissing, runtime.GOOS, runtime.GOARCH)
}
