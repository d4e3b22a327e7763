package milvus

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"

	"github.com/hindsight-memory/hindsight/memory"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

const (
	// maxWindow is Milvus' largest topk, and largest offset+limit of a query.
	maxWindow = 16384
	// idsPerCall bounds the primary keys in one expression, keeping
	// expressions far below Milvus' size limits.
	idsPerCall = 1000
	// upsertBytes bounds the vector payload of one upsert request, well
	// under gRPC's and Milvus' message limits.
	upsertBytes = 16 << 20
)

// scalarFields are returned with search hits (hybrid ones too) and
// listings; vectorFields adds the vectors, for Get.
var (
	scalarFields = []string{
		schema.FieldID, schema.FieldTenant, schema.FieldScope, schema.FieldKind, schema.FieldTaskType, schema.FieldStatus,
		schema.FieldConfidence, schema.FieldDecay, schema.FieldCreatedAt, schema.FieldUpdatedAt,
		schema.FieldRecallCount, schema.FieldPinned, schema.FieldEntities,
	}
	denseFields  = append(slices.Clone(scalarFields), schema.FieldVector)
	sparseFields = append(slices.Clone(denseFields), schema.FieldSparse)
)

// vectorFields are the fields of c with both its vectors.
func (x *Index) vectorFields(c memory.Collection) []string {
	if x.specs[c].Sparse != nil {
		return sparseFields
	}
	return denseFields
}

// collection returns the Milvus name of c, or EINVALID.
func (x *Index) collection(op string, c memory.Collection) (string, error) {
	if err := memory.ValidateCollection(op, c); err != nil {
		return "", err
	}
	return x.specs[c].Name, nil
}

func (x *Index) readOpts(extra ...client.SearchQueryOptionFunc) []client.SearchQueryOptionFunc {
	return append([]client.SearchQueryOptionFunc{client.WithSearchQueryConsistencyLevel(x.consistency)}, extra...)
}

// Upsert implements memory.VectorIndex. A batch holding the same ID twice
// keeps the last, as the in-memory reference does (Milvus itself refuses
// duplicate keys in one upsert).
func (x *Index) Upsert(ctx context.Context, c memory.Collection, docs []memory.VectorDoc) error {
	const op = "milvus: upsert"
	name, err := x.collection(op, c)
	if err != nil {
		return err
	}
	if err := memory.ValidateVectorDocs(op, x.cfg.Dim, docs); err != nil {
		return err
	}
	if err := validateLimits(op, docs); err != nil {
		return err
	}
	sparse := x.specs[c].Sparse != nil
	if !sparse {
		for _, d := range docs {
			if !d.Sparse.IsZero() {
				return memory.Invalidf(op, "document %s has a sparse vector, but the %s collection keeps none", d.ID, c)
			}
		}
	}
	for _, chunk := range x.chunks(lastByKey(docs)) {
		rctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
		_, err := x.client.Upsert(rctx, name, "", columns(x.cfg.Dim, sparse, chunk)...)
		cancel()
		if err != nil {
			return x.fail("upsert", name, err)
		}
	}
	return nil
}

// chunks splits documents into upsert requests of at most idsPerCall
// documents and about upsertBytes of vectors: 4 bytes a dimension, 8 a
// sparse entry.
func (x *Index) chunks(docs []memory.VectorDoc) [][]memory.VectorDoc {
	return memory.ChunkDocs(docs, upsertBytes, idsPerCall, func(d memory.VectorDoc) int { return 4*x.cfg.Dim + 8*max(1, d.Sparse.Len()) })
}

// lastByKey drops every document that a later one with the same (tenant,
// ID) replaces.
func lastByKey(docs []memory.VectorDoc) []memory.VectorDoc {
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[schema.PrimaryKey(d.Tenant, d.ID)] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := make([]memory.VectorDoc, 0, len(last))
	for i, d := range docs {
		if last[schema.PrimaryKey(d.Tenant, d.ID)] == i {
			out = append(out, d)
		}
	}
	return out
}

// Search implements memory.VectorIndex. k must be at most 16384, Milvus'
// largest topk; k = 0 returns nothing.
func (x *Index) Search(ctx context.Context, c memory.Collection, vector []float32, f memory.VectorFilter, k int) ([]memory.VectorHit, error) {
	const op = "milvus: search"
	name, err := x.collection(op, c)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(op); err != nil {
		return nil, err
	}
	if len(vector) != x.cfg.Dim {
		return nil, memory.Invalidf(op, "query vector has dimension %d, the index has dimension %d", len(vector), x.cfg.Dim)
	}
	if k < 0 || k > maxWindow {
		return nil, memory.Invalidf(op, "k = %d is out of range: Milvus returns between 0 and %d hits", k, maxWindow)
	}
	if k == 0 {
		return []memory.VectorHit{}, nil
	}
	expr, err := buildExpr(selection{filter: f})
	if err != nil {
		return nil, err
	}
	sp, err := x.searchParam(k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return x.search(ctx, op, name, expr, entity.FloatVector(vector), schema.FieldVector, x.specs[c].Index.Metric, sp, k)
}

// search is one Milvus Search of field (scored by metric) for vector under
// expr: up to k hits with the scalar fields and Milvus' own score, no
// vector, best first, ties by ID.
func (x *Index) search(ctx context.Context, op, name, expr string, vector entity.Vector, field, metric string, sp entity.SearchParam, k int) ([]memory.VectorHit, error) {
	rctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
	defer cancel()
	res, err := x.client.Search(rctx, name, nil, expr, scalarFields, []entity.Vector{vector},
		field, entity.MetricType(metric), k, sp, x.readOpts()...)
	if err != nil {
		return nil, x.fail("search", name, err)
	}
	hits := []memory.VectorHit{}
	for _, r := range res {
		if r.Err != nil {
			return nil, x.fail("search", name, r.Err)
		}
		docs, err := docsFrom(r.Fields, r.ResultCount)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", op, name, err)
		}
		for i, d := range docs {
			hits = append(hits, memory.VectorHit{Doc: d, Score: float64(r.Scores[i])})
		}
	}
	// Milvus breaks ties arbitrarily; the contract breaks them by ID.
	memory.SortHits(hits)
	return hits, nil
}

// searchParam is the search-time parameter of the configured index type.
func (x *Index) searchParam(k int) (entity.SearchParam, error) {
	switch x.cfg.IndexType {
	case "HNSW":
		return entity.NewIndexHNSWSearchParam(max(x.cfg.Ef, k))
	case "IVF_FLAT":
		return entity.NewIndexIvfFlatSearchParam(x.cfg.NProbe)
	case "DISKANN":
		return entity.NewIndexDISKANNSearchParam(max(x.cfg.Ef, k))
	case "AUTOINDEX":
		return entity.NewIndexAUTOINDEXSearchParam(1)
	}
	return entity.NewIndexFlatSearchParam()
}

// Get implements memory.VectorIndex.
func (x *Index) Get(ctx context.Context, c memory.Collection, tenant string, ids []string) ([]memory.VectorDoc, error) {
	const op = "milvus: get"
	name, err := x.collection(op, c)
	if err != nil {
		return nil, err
	}
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return nil, err
	}
	out := []memory.VectorDoc{}
	for chunk := range slices.Chunk(uniq(ids), idsPerCall) {
		expr, err := buildExpr(selection{filter: memory.VectorFilter{Tenant: tenant}, ids: chunk})
		if err != nil {
			return nil, err
		}
		docs, err := x.query(ctx, name, expr, x.vectorFields(c), 0)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// Delete implements memory.VectorIndex.
func (x *Index) Delete(ctx context.Context, c memory.Collection, tenant string, ids []string) error {
	const op = "milvus: delete"
	name, err := x.collection(op, c)
	if err != nil {
		return err
	}
	if err := memory.ValidateTenant(op, tenant); err != nil {
		return err
	}
	for chunk := range slices.Chunk(uniq(ids), idsPerCall) {
		expr, err := buildExpr(selection{filter: memory.VectorFilter{Tenant: tenant}, ids: chunk})
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
		err = x.client.Delete(rctx, name, "", expr)
		cancel()
		if err != nil {
			return x.fail("delete", name, err)
		}
	}
	return nil
}

// List implements memory.VectorIndex. It pages on the primary key: Milvus
// returns a limited query's results ordered by primary key, and within one
// tenant primary keys order as IDs do (schema.PrimaryKey).
func (x *Index) List(ctx context.Context, c memory.Collection, f memory.VectorFilter, afterID string, limit int) ([]memory.VectorDoc, error) {
	const op = "milvus: list"
	name, err := x.collection(op, c)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(op); err != nil {
		return nil, err
	}
	out := []memory.VectorDoc{}
	for limit <= 0 || len(out) < limit {
		page := maxWindow
		if limit > 0 {
			page = min(page, limit-len(out))
		}
		expr, err := buildExpr(selection{filter: f, afterID: afterID})
		if err != nil {
			return nil, err
		}
		docs, err := x.query(ctx, name, expr, scalarFields, page)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
		if len(docs) < page {
			break
		}
		afterID = docs[len(docs)-1].ID
	}
	return out, nil
}

// query runs one query and returns its documents in ID order; limit 0
// means no limit.
func (x *Index) query(ctx context.Context, name, expr string, fields []string, limit int) ([]memory.VectorDoc, error) {
	var opts []client.SearchQueryOptionFunc
	if limit > 0 {
		opts = append(opts, client.WithLimit(int64(limit)))
	}
	rctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
	defer cancel()
	rs, err := x.client.Query(rctx, name, nil, expr, fields, x.readOpts(opts...)...)
	if err != nil {
		return nil, x.fail("query", name, err)
	}
	n := 0
	if col := rs.GetColumn(schema.FieldID); col != nil {
		n = col.Len()
	}
	docs, err := docsFrom(rs, n)
	if err != nil {
		return nil, fmt.Errorf("milvus: query %s: %w", name, err)
	}
	slices.SortFunc(docs, func(a, b memory.VectorDoc) int { return cmp.Compare(a.ID, b.ID) })
	return docs, nil
}

func uniq(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
