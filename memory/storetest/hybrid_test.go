package storetest_test

import (
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

func TestHybridMemIndex(t *testing.T) {
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher { return memory.NewMemIndex(dim) })
}
