package local

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/hindsight-memory/hindsight/memory"
)

var _ memory.HybridSearcher = (*Index)(nil)

// HybridSearch implements memory.HybridSearcher. The dense side is a
// Search (through the graph or exact, as Search decides); the sparse side
// scans the partition's documents that pass the filter, exactly. Each
// candidate's other score is then computed exactly from its stored
// vectors, and memory.UnionHybrid ranks both sides and orders the union.
func (x *Index) HybridSearch(ctx context.Context, c memory.Collection, q memory.HybridQuery) ([]memory.HybridHit, error) {
	const op = "local: hybrid search"
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := memory.ValidateCollection(op, c); err != nil {
		return nil, err
	}
	if err := memory.ValidateHybridQuery(op, x.cfg.Dim, q); err != nil {
		return nil, err
	}
	p, err := x.partition(c, q.Filter.Tenant)
	if err != nil || p == nil {
		return []memory.HybridHit{}, wrapErr(op, err)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	st := p.st
	var nodes []uint32
	if q.Dense != nil {
		hits := st.search(unit(q.Dense), q.Filter, q.PerSide, searchParams{exactThreshold: x.cfg.ExactThreshold, ef: x.cfg.HNSW.EfSearch, stats: &x.stats})
		for _, h := range hits {
			nodes = append(nodes, st.byID[h.Doc.ID])
		}
	}
	if !q.Sparse.IsZero() {
		for _, i := range st.sparseTop(q.Sparse, q.Filter, q.PerSide) {
			if !slices.Contains(nodes, i) {
				nodes = append(nodes, i)
			}
		}
	}
	hits := make([]memory.HybridHit, 0, len(nodes))
	for _, i := range nodes {
		h := memory.HybridHit{Doc: st.hit(i, 0).Doc, Sparse: q.Sparse.Dot(st.docs[i].Sparse)}
		if q.Dense != nil {
			h.Dense = memory.Cosine(q.Dense, st.vecs.at(i))
		}
		hits = append(hits, h)
	}
	return memory.UnionHybrid(hits, q), nil
}

// sparseTop returns the k live nodes passing f whose sparse vectors have
// the largest positive dot products with q, best first, ties by ID.
func (st *state) sparseTop(q memory.SparseVector, f memory.VectorFilter, k int) []uint32 {
	type scored struct {
		i     uint32
		score float64
	}
	pf := st.prefilter(f)
	var all []scored
	for n := range st.live {
		i := uint32(n)
		if st.docs[i].Sparse.IsZero() || !st.accepts(i, pf, &f) {
			continue
		}
		if s := q.Dot(st.docs[i].Sparse); s > 0 {
			all = append(all, scored{i, s})
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(st.docs[a.i].ID, st.docs[b.i].ID)
	})
	out := make([]uint32, 0, min(k, len(all)))
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.i)
	}
	return out
}
