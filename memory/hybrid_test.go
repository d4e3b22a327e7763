package memory_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

// TestJoinHybrid checks that joining the two sides searched apart, each
// with its own scores and no vectors, answers as the exact hybrid search
// does: the same hits, ranks, scores and order.
func TestJoinHybrid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var docs []memory.VectorDoc
	for i := range 80 {
		d := memory.VectorDoc{ID: fmt.Sprintf("d%02d", i), Tenant: "acme", Vector: storetest.Unit(r, 8), Status: "live"}
		if i%5 != 0 {
			d.Sparse = memory.SparseVector{Indices: []uint32{uint32(i % 7), uint32(7 + i%3)}, Values: []float32{float32(1 + i%4), 0.5}}
		}
		docs = append(docs, d)
	}
	for _, q := range []memory.HybridQuery{
		{Dense: storetest.Unit(r, 8), Sparse: memory.SparseVector{Indices: []uint32{2, 8}, Values: []float32{1.5, 0.7}}, PerSide: 10, DenseWeight: 0.6},
		{Dense: storetest.Unit(r, 8), Sparse: memory.SparseVector{Indices: []uint32{3}, Values: []float32{1}}, PerSide: 100, DenseWeight: 0.3},
		{Dense: storetest.Unit(r, 8), PerSide: 7, DenseWeight: 0.5},
		{Sparse: memory.SparseVector{Indices: []uint32{1, 9}, Values: []float32{2, 1}}, PerSide: 5},
	} {
		var dense, sparse []memory.VectorHit
		for _, d := range docs {
			if q.Dense != nil {
				dense = append(dense, memory.VectorHit{Doc: d, Score: memory.Cosine(q.Dense, d.Vector)})
			}
			if s := q.Sparse.Dot(d.Sparse); s > 0 {
				sparse = append(sparse, memory.VectorHit{Doc: d, Score: s})
			}
		}
		memory.SortHits(dense)
		memory.SortHits(sparse)
		got := memory.JoinHybrid(dense[:min(len(dense), q.PerSide)], sparse[:min(len(sparse), q.PerSide)], q)
		want := memory.ExactHybrid(docs, q)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("per side %d: joined\n%+v\nwant\n%+v", q.PerSide, got, want)
		}
	}
}
