package chdb

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

// Config configures the embedded engine.
type Config struct {
	// DataDir holds chDB's files. One process at a time may own it.
	DataDir string
	// LibPath is libchdb.so. Default: LibPath(DefaultCacheDir()).
	LibPath string
	// Sessions bounds the queries running at once; default 4.
	Sessions int
	// Store configures the adapter on top (database, retention, timeouts,
	// logger, SkipMigrate). Its server fields (Addr, DSN, TLS, credentials,
	// Transport) must stay empty.
	Store clickhouse.Config
}

// DefaultCacheDir is $HOME/.cache/hindsight, where `make chdb` and
// scripts/fetch-chdb.sh put the library unless HINDSIGHT_CACHE says
// otherwise (LibPathFromEnv).
func DefaultCacheDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("chdb: find the cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "hindsight"), nil
}

// LibPathFromEnv is the library the environment names: HINDSIGHT_CHDB_LIB,
// else where scripts/fetch-chdb.sh installs it in the cache
// (HINDSIGHT_CACHE, else DefaultCacheDir).
func LibPathFromEnv() (string, error) {
	if p := os.Getenv("HINDSIGHT_CHDB_LIB"); p != "" {
		return p, nil
	}
	cache := os.Getenv("HINDSIGHT_CACHE")
	if cache == "" {
		var err error
		if cache, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	return LibPath(cache), nil
}

// LibPath is where scripts/fetch-chdb.sh installs libchdb.so in cacheDir.
func LibPath(cacheDir string) string {
	return filepath.Join(cacheDir, "chdb", Version, "libchdb.so")
}

func (c Config) withDefaults() (Config, error) {
	if c.LibPath == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return c, err
		}
		c.LibPath = LibPath(dir)
	}
	if c.Sessions == 0 {
		c.Sessions = 4
	}
	if c.DataDir != "" {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			return c, fmt.Errorf("chdb: data directory %s: %w", c.DataDir, err)
		}
		c.DataDir = abs
	}
	return c, nil
}

// Validate reports the first thing to fix in c.
func (c Config) Validate() error {
	const op = "chdb: config"
	switch {
	case c.DataDir == "":
		return memory.Invalidf(op, "DataDir is required: the directory that holds the embedded database")
	case c.Sessions < 1:
		return memory.Invalidf(op, "Sessions must be at least 1, got %d", c.Sessions)
	case len(c.Store.Addr) > 0 || c.Store.DSN != "" || c.Store.TLS != nil || c.Store.Username != "" || c.Store.Transport != nil:
		return memory.Invalidf(op, "Store must not name a server (Addr, DSN, TLS, credentials, Transport): the embedded engine is the server")
	}
	return nil
}
