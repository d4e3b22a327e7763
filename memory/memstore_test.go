package memory_test

import (
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.TestEpisodicStore(t, func(t *testing.T) memory.EpisodicStore { return memory.NewMemStore() })
}

func TestMemIndex(t *testing.T) {
	storetest.TestVectorIndex(t, func(t *testing.T, dim int) memory.VectorIndex { return memory.NewMemIndex(dim) })
}
