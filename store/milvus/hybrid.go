package milvus

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"

	"github.com/hindsight-memory/hindsight/memory"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

var _ memory.HybridSearcher = (*Index)(nil)

// HybridSearch implements memory.HybridSearcher with one Milvus
// HybridSearch: a dense sub-search of the vector field and a sparse one of
// the keyword field (either alone when the query has one side only), each
// of q.PerSide hits under the tenant's filter, fused by Milvus' weighted
// reranker with weights DenseWeight and 1-DenseWeight. Its limit, 2·PerSide,
// keeps the whole union. The hits come back with both vectors, from which
// both scores are computed here exactly (Milvus reports only the fused
// one); memory.UnionHybrid then ranks each side and orders the union.
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
	var reqs []*client.ANNSearchRequest
	var weights []float64
	if q.Dense != nil {
		sp, err := x.searchParam(q.PerSide)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		reqs = append(reqs, client.NewANNSearchRequest(schema.FieldVector, entity.MetricType(spec.Index.Metric), expr,
			[]entity.Vector{entity.FloatVector(q.Dense)}, sp, q.PerSide))
		weights = append(weights, q.DenseWeight)
	}
	if !q.Sparse.IsZero() {
		// Nothing dropped at search time: the scores are exact dot products.
		sp, err := entity.NewIndexSparseInvertedSearchParam(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		reqs = append(reqs, client.NewANNSearchRequest(schema.FieldSparse, entity.MetricType(spec.Sparse.Metric), expr,
			[]entity.Vector{sparseRow(q.Sparse).(entity.Vector)}, sp, q.PerSide))
		weights = append(weights, 1-q.DenseWeight)
	}
	if len(reqs) == 1 {
		weights[0] = 1 // one side alone: its own order
	}
	rctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
	defer cancel()
	res, err := x.client.HybridSearch(rctx, name, nil, 2*q.PerSide, x.vectorFields(c), client.NewWeightedReranker(weights), reqs, x.readOpts()...)
	if err != nil {
		return nil, x.fail("hybrid search", name, err)
	}
	hits := []memory.HybridHit{}
	for _, r := range res {
		if r.Err != nil {
			return nil, x.fail("hybrid search", name, r.Err)
		}
		docs, err := docsFrom(r.Fields, r.ResultCount)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", op, name, err)
		}
		for _, d := range docs {
			h := memory.HybridHit{Doc: d, Sparse: q.Sparse.Dot(d.Sparse)}
			if q.Dense != nil {
				h.Dense = memory.Cosine(q.Dense, d.Vector)
			}
			hits = append(hits, h)
		}
	}
	return memory.UnionHybrid(hits, q), nil
}
