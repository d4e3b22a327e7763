package storetest

import (
	"context"
	"sync/atomic"

	"github.com/hindsight-memory/hindsight/memory"
)

// CountingStore is a MemStore that counts its reads of memories by ID
// (Memories calls that name IDs), for tests that bound how often a path
// reads the store.
type CountingStore struct {
	*memory.MemStore
	byID atomic.Int64
}

// NewCountingStore counts the reads of backing.
func NewCountingStore(backing *memory.MemStore) *CountingStore {
	return &CountingStore{MemStore: backing}
}

// Memories implements memory.MemoryStore, counting a read by ID.
func (s *CountingStore) Memories(ctx context.Context, f memory.MemoryFilter) ([]memory.Memory, error) {
	if len(f.IDs) > 0 {
		s.byID.Add(1)
	}
	return s.MemStore.Memories(ctx, f)
}

// ReadsByID is how many reads by ID there were since the last Reset.
func (s *CountingStore) ReadsByID() int { return int(s.byID.Load()) }

// Reset starts the count again.
func (s *CountingStore) Reset() { s.byID.Store(0) }
