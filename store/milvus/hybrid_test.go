package milvus

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

func TestHybridAcceptanceFake(t *testing.T) {
	srv := startFake(t)
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher {
		return open(t, Config{Address: srv.Addr(), Dim: dim})
	})
}

func TestHybridAcceptanceMilvus(t *testing.T) {
	addr := os.Getenv("MILVUS_ADDR")
	if addr == "" {
		t.Skip("MILVUS_ADDR is not set; the same suite runs against the fake in TestHybridAcceptanceFake")
	}
	storetest.TestHybridSearcher(t, func(t *testing.T, dim int) memory.HybridSearcher {
		return open(t, Config{Address: addr, Dim: dim, Token: os.Getenv("MILVUS_TOKEN")})
	})
}

// TestEmptySparseStoredAsPlaceholder checks how a document without
// keywords is stored: as the one-entry row schema.EmptySparseIndex → 0,
// since Milvus before 2.4.12 refuses empty rows (as the fake does), and
// read back as empty.
func TestEmptySparseStoredAsPlaceholder(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 4})
	d := memory.VectorDoc{ID: "m1", Tenant: "acme", Vector: []float32{1, 0, 0, 0}, Status: "live"}
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}); err != nil {
		t.Fatal(err)
	}
	name := x.specs[memory.CollectionMemories].Name
	rs, err := x.client.Query(ctx, name, nil, `tenant == "acme"`, []string{schema.FieldSparse})
	if err != nil {
		t.Fatal(err)
	}
	rows := rs.GetColumn(schema.FieldSparse).(*entity.ColumnSparseFloatVector).Data()
	if len(rows) != 1 || rows[0].Len() != 1 {
		t.Fatalf("stored sparse rows = %+v", rows)
	}
	if i, v, _ := rows[0].Get(0); i != schema.EmptySparseIndex || v != 0 {
		t.Fatalf("the stored row of a document without keywords is %d → %v", i, v)
	}
	got, err := x.Get(ctx, memory.CollectionMemories, "acme", []string{"m1"})
	if err != nil || len(got) != 1 || !got[0].Sparse.IsZero() {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	// A query holding the placeholder's index finds no keyword match.
	hits, err := x.HybridSearch(ctx, memory.CollectionMemories, memory.HybridQuery{
		Filter: memory.VectorFilter{Tenant: "acme"}, Sparse: memory.SparseVector{Indices: []uint32{schema.EmptySparseIndex}, Values: []float32{1}}, PerSide: 5,
	})
	if err != nil || len(hits) != 0 {
		t.Fatalf("a sparse query of the placeholder's index = %+v, %v", hits, err)
	}
	// An empty row, which the adapter never sends, is what Milvus 2.4
	// refuses.
	empty, _ := entity.NewSliceSparseEmbedding(nil, nil)
	cols := append(columns(4, false, []memory.VectorDoc{d}), entity.NewColumnSparseVectors(schema.FieldSparse, []entity.SparseEmbedding{empty}))
	if _, err := x.client.Upsert(ctx, name, "", cols...); err == nil || !strings.Contains(err.Error(), "empty sparse float vector row") {
		t.Fatalf("an upsert of an empty sparse row = %v", err)
	}
}

// TestHybridSearchSendsNoVectors checks the requests the adapter sends:
// one Search per side, of its field, with the tenant's filter on each and
// PerSide hits, asking for scalar fields only: no hit comes back with a
// vector, since each side reports its own score.
func TestHybridSearchSendsNoVectors(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 4})
	r := rand.New(rand.NewPCG(1, 2))
	var docs []memory.VectorDoc
	for i := range 20 {
		d := memory.VectorDoc{ID: string(rune('a' + i)), Tenant: "acme", Vector: storetest.Unit(r, 4), Status: "live",
			Sparse: memory.SparseVector{Indices: []uint32{uint32(i % 4)}, Values: []float32{float32(1 + i)}}}
		docs = append(docs, d)
	}
	if err := x.Upsert(ctx, memory.CollectionMemories, docs); err != nil {
		t.Fatal(err)
	}
	sent := func(q memory.HybridQuery) []*milvuspb.SearchRequest {
		t.Helper()
		before := srv.Calls()
		hits, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Fatal("no hits")
		}
		calls := srv.Calls().Sub(before)
		if len(calls) != 1 || calls["Search"] == 0 {
			t.Fatalf("a hybrid search made the calls %v, want Searches only", calls)
		}
		reqs := srv.LastSearches(calls["Search"])
		for _, req := range reqs {
			p := map[string]string{}
			for _, kv := range req.GetSearchParams() {
				p[kv.GetKey()] = kv.GetValue()
			}
			if p["topk"] != strconv.Itoa(q.PerSide) || !strings.Contains(req.GetDsl(), `tenant == "acme"`) {
				t.Fatalf("search of %s: params %v, filter %q", p["anns_field"], p, req.GetDsl())
			}
			for _, f := range req.GetOutputFields() {
				if f == schema.FieldVector || f == schema.FieldSparse {
					t.Fatalf("search of %s asks for the vector field %s: output fields %v", p["anns_field"], f, req.GetOutputFields())
				}
			}
		}
		return reqs
	}
	fields := func(reqs []*milvuspb.SearchRequest) []string {
		var out []string
		for _, req := range reqs {
			for _, kv := range req.GetSearchParams() {
				if kv.GetKey() == "anns_field" {
					out = append(out, kv.GetValue())
				}
			}
		}
		slices.Sort(out)
		return out
	}
	q := memory.HybridQuery{Filter: memory.VectorFilter{Tenant: "acme"}, Dense: storetest.Unit(r, 4),
		Sparse: memory.SparseVector{Indices: []uint32{1}, Values: []float32{1}}, PerSide: 3, DenseWeight: 0.6}
	if got := fields(sent(q)); !slices.Equal(got, []string{schema.FieldSparse, schema.FieldVector}) {
		t.Fatalf("a hybrid search searched %v, want both fields once", got)
	}
	// One side alone is one Search.
	if got := fields(sent(memory.HybridQuery{Filter: q.Filter, Dense: q.Dense, PerSide: 2})); !slices.Equal(got, []string{schema.FieldVector}) {
		t.Fatalf("a dense query searched %v", got)
	}
	if got := fields(sent(memory.HybridQuery{Filter: q.Filter, Sparse: q.Sparse, PerSide: 2})); !slices.Equal(got, []string{schema.FieldSparse}) {
		t.Fatalf("a sparse query searched %v", got)
	}
}

func TestHybridSearchEpisodes(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 4})
	ep := memory.VectorDoc{ID: "e1", Tenant: "acme", Vector: []float32{1, 0, 0, 0}, Status: "live"}
	if err := x.Upsert(ctx, memory.CollectionEpisodes, []memory.VectorDoc{ep}); err != nil {
		t.Fatal(err)
	}
	hits, err := x.HybridSearch(ctx, memory.CollectionEpisodes, memory.HybridQuery{Filter: memory.VectorFilter{Tenant: "acme"}, Dense: []float32{1, 0, 0, 0}, PerSide: 3})
	if err != nil || len(hits) != 1 || hits[0].Doc.ID != "e1" || hits[0].DenseRank != 1 {
		t.Fatalf("a dense hybrid search of episodes = %+v, %v", hits, err)
	}
	_, err = x.HybridSearch(ctx, memory.CollectionEpisodes, memory.HybridQuery{Filter: memory.VectorFilter{Tenant: "acme"},
		Sparse: memory.SparseVector{Indices: []uint32{1}, Values: []float32{1}}, PerSide: 3})
	if !memory.IsInvalid(err) {
		t.Fatalf("a sparse search of episodes = %v, want EINVALID", err)
	}
	ep.Sparse = memory.SparseVector{Indices: []uint32{1}, Values: []float32{1}}
	if err := x.Upsert(ctx, memory.CollectionEpisodes, []memory.VectorDoc{ep}); !memory.IsInvalid(err) {
		t.Fatalf("an episode with a sparse vector = %v, want EINVALID", err)
	}
}

// TestOpenRefusesCollectionWithoutSparse opens a memories collection made
// before the sparse field existed: Open fails with EINVALID and says to
// rebuild the index generation.
func TestOpenRefusesCollectionWithoutSparse(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	prefix := uniquePrefix()
	c, err := client.NewClient(ctx, client.Config{Address: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := schema.Spec(memory.CollectionMemories, Config{Dim: 4, CollectionPrefix: prefix}.schemaOptions())
	spec.Fields = slices.DeleteFunc(spec.Fields, func(f schema.Field) bool { return f.Name == schema.FieldSparse })
	spec.Sparse = nil
	if err := c.CreateCollection(ctx, entitySchema(spec), 1); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Config{Address: srv.Addr(), Dim: 4, CollectionPrefix: prefix, Logger: quietLogger()})
	var se *schema.SparseFieldError
	if !memory.IsInvalid(err) || !errors.As(err, &se) || !strings.Contains(err.Error(), "reindex") {
		t.Fatalf("Open of a memories collection without the sparse field = %v, want EINVALID saying to reindex", err)
	}
}

// TestOpenCreatesSparseIndex checks the sparse index Open builds, and that
// a second Open accepts it.
func TestOpenCreatesSparseIndex(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 4})
	name := x.specs[memory.CollectionMemories].Name
	idx, err := x.client.DescribeIndex(ctx, name, schema.FieldSparse)
	if err != nil || len(idx) != 1 || idx[0].IndexType() != "SPARSE_INVERTED_INDEX" || idx[0].Params()["metric_type"] != "IP" {
		t.Fatalf("sparse index = %+v, %v", idx, err)
	}
	if _, err := x.client.DescribeIndex(ctx, x.specs[memory.CollectionEpisodes].Name, schema.FieldSparse); err == nil {
		t.Fatal("episodes have a sparse index")
	}
	y, err := Open(ctx, Config{Address: srv.Addr(), Dim: 4, CollectionPrefix: x.cfg.CollectionPrefix, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("a second Open: %v", err)
	}
	y.Close()
}
