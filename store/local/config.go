package local

import (
	"errors"
	"fmt"
	"log/slog"
)

// SyncPolicy says when log writes reach the disk.
type SyncPolicy int

const (
	// SyncAlways fsyncs the log before a write returns (concurrent writers
	// share an fsync). An acknowledged write survives a crash of the process
	// and of the machine. The default.
	SyncAlways SyncPolicy = iota
	// SyncNever leaves flushing to the operating system. An acknowledged
	// write survives a crash of the process (kill -9), not a power loss.
	SyncNever
)

// HNSWConfig tunes the graph of large partitions.
type HNSWConfig struct {
	// M is the number of links per node on the upper layers; layer 0 has
	// 2·M. Default 16.
	M int
	// EfConstruction is the beam width when inserting. Default 128.
	EfConstruction int
	// EfSearch is the beam width when searching; a search for k uses at
	// least k. Default 96.
	EfSearch int
}

// Config configures the local index.
type Config struct {
	// Dir holds the index: its log, snapshots and a lock file. Required;
	// created if missing. One process at a time may open it.
	Dir string
	// Dim is the embedder's dimension. Required. A directory holding
	// another dimension is refused.
	Dim int
	// ExactThreshold is the partition size (one tenant in one collection)
	// up to which searches scan every document exactly; larger partitions
	// search the graph, except when the filter's estimated matches are no
	// more than this. Default 20000.
	ExactThreshold int
	// HNSW tunes the graph.
	HNSW HNSWConfig
	// Sync is the fsync policy. Default SyncAlways.
	Sync SyncPolicy
	// SnapshotBytes is how much log triggers a checkpoint, which snapshots
	// the changed partitions and deletes the log they cover. The trigger
	// grows with the index: at least half the size of the last snapshots,
	// so that rewriting them stays proportionate. Default 64 MiB.
	SnapshotBytes int64
	// Workers is how many goroutines link a large batch into the graph.
	// Default GOMAXPROCS.
	Workers int
	// Logger receives recovery and checkpoint events. Default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.ExactThreshold == 0 {
		c.ExactThreshold = 20000
	}
	if c.HNSW.M == 0 {
		c.HNSW.M = 16
	}
	if c.HNSW.EfConstruction == 0 {
		c.HNSW.EfConstruction = 128
	}
	if c.HNSW.EfSearch == 0 {
		c.HNSW.EfSearch = 96
	}
	if c.SnapshotBytes == 0 {
		c.SnapshotBytes = 64 << 20
	}
	if c.Workers == 0 {
		c.Workers = defaultWorkers()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem with c, after defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("dir is required: set it to the directory that holds the index"))
	}
	if c.Dim < 1 || c.Dim > 65536 {
		errs = append(errs, fmt.Errorf("dimension %d is not valid: set it to the embedder's dimension", c.Dim))
	}
	if c.ExactThreshold < 0 {
		errs = append(errs, fmt.Errorf("exact threshold %d must not be negative", c.ExactThreshold))
	}
	if c.HNSW.M < 2 || c.HNSW.M > 128 {
		errs = append(errs, fmt.Errorf("HNSW M %d is out of range [2, 128]", c.HNSW.M))
	}
	if c.HNSW.EfConstruction < c.HNSW.M || c.HNSW.EfConstruction > 4096 {
		errs = append(errs, fmt.Errorf("HNSW efConstruction %d is out of range [M, 4096]", c.HNSW.EfConstruction))
	}
	if c.HNSW.EfSearch < 1 || c.HNSW.EfSearch > 4096 {
		errs = append(errs, fmt.Errorf("HNSW efSearch %d is out of range [1, 4096]", c.HNSW.EfSearch))
	}
	if c.Sync != SyncAlways && c.Sync != SyncNever {
		errs = append(errs, fmt.Errorf("sync policy %d is not SyncAlways or SyncNever", c.Sync))
	}
	if c.SnapshotBytes < 1<<10 {
		errs = append(errs, fmt.Errorf("snapshot bytes %d is below 1 KiB", c.SnapshotBytes))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers %d must be at least 1", c.Workers))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("local: config: %w", err)
	}
	return nil
}
