package milvus

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/milvus-io/milvus-sdk-go/v2/entity"

	"github.com/hindsight-memory/hindsight/memory"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

var _ memory.HybridSearcher = (*Index)(nil)

// HybridSearch implements memory.HybridSearcher with a Search of each
// side at once: the dense one of the vector field (the collection's
// metric) and the sparse one of the keyword field (IP, nothing dropped),
// each of q.PerSide hits under the tenant's filter, and either alone when
// the query has one side only. Each Search reports its own side's score,
// so the hits come back with their scalar fields only, no vector (one
// HybridSearch reports only the fused score, and recovering both meant
// shipping every hit's two vectors); memory.JoinHybrid then ranks each
// side and orders the union as Milvus' weighted reranker does.
//
// The episodes collection has no sparse field: a sparse query of it is
// EINVALID.
func (x *Index) HybridSearch(ctx context.Context, c memory.Collection, q memory.HybridQuery) ([]memory.HybridHit, error) {
	const op = "milvus: hybrid search"
	name, err := x.collection(op, c)
	if err != nil {
		return nil, err
	}
	if err := memory.ValidateHybridQuery(op, x.cfg.Dim, q); err != nil {
		return nil, err
	}
	spec := x.specs[c]
	if spec.Sparse == nil && !q.Sparse.IsZero() {
		return nil, memory.Invalidf(op, "the %s collection keeps no sparse vectors; search it with a dense vector only", c)
	}
	expr, err := buildExpr(selection{filter: q.Filter})
	if err != nil {
		return nil, err
	}
	var dense, sparse []memory.VectorHit
	var denseErr, sparseErr error
	var wg sync.WaitGroup
	if q.Dense != nil {
		sp, err := x.searchParam(q.PerSide)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		wg.Go(func() {
			dense, denseErr = x.search(ctx, op, name, expr, entity.FloatVector(q.Dense), schema.FieldVector, spec.Index.Metric, sp, q.PerSide)
		})
	}
	if !q.Sparse.IsZero() {
		// Nothing dropped at search time: the scores are exact dot products.
		sp, err := entity.NewIndexSparseInvertedSearchParam(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		sparse, sparseErr = x.search(ctx, op, name, expr, sparseRow(q.Sparse).(entity.Vector), schema.FieldSparse, spec.Sparse.Metric, sp, q.PerSide)
	}
	wg.Wait()
	if err := errors.Join(denseErr, sparseErr); err != nil {
		return nil, err
	}
	return memory.JoinHybrid(dense, sparse, q), nil
}
