package milvus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
	"github.com/hindsight-memory/hindsight/store/milvus/milvusfake"
)

var prefixSeq atomic.Int64

// uniquePrefix names collections no other test (or earlier run against a
// shared real Milvus) uses.
func uniquePrefix() string {
	return fmt.Sprintf("hstest_%x_%d", time.Now().UnixNano()%(1<<40), prefixSeq.Add(1))
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startFake(t *testing.T) *milvusfake.Server {
	t.Helper()
	srv, err := milvusfake.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// open opens an index on fresh collections and drops them after the test.
func open(t *testing.T, cfg Config) *Index {
	t.Helper()
	if cfg.CollectionPrefix == "" {
		cfg.CollectionPrefix = uniquePrefix()
	}
	cfg.Logger = quietLogger()
	x, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Drop(context.Background()); err != nil {
			t.Errorf("drop: %v", err)
		}
		x.Close()
	})
	return x
}

func TestAcceptanceFake(t *testing.T) {
	srv := startFake(t)
	storetest.TestVectorIndex(t, func(t *testing.T, dim int) memory.VectorIndex {
		return open(t, Config{Address: srv.Addr(), Dim: dim})
	})
}

func TestAcceptanceMilvus(t *testing.T) {
	addr := os.Getenv("MILVUS_ADDR")
	if addr == "" {
		t.Skip("MILVUS_ADDR is not set; the same suite runs against the fake in TestAcceptanceFake")
	}
	storetest.TestVectorIndex(t, func(t *testing.T, dim int) memory.VectorIndex {
		return open(t, Config{Address: addr, Dim: dim, Token: os.Getenv("MILVUS_TOKEN")})
	})
}

func TestOpenIsIdempotent(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	a := open(t, Config{Address: srv.Addr(), Dim: 8})
	doc := memory.VectorDoc{ID: "m1", Tenant: "acme", Vector: storetest.Unit(rand.New(rand.NewPCG(1, 1)), 8), Status: "live"}
	if err := a.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{doc}); err != nil {
		t.Fatal(err)
	}
	// A second process opening the same collections finds them ready and
	// sees the first one's writes.
	b, err := Open(ctx, Config{Address: srv.Addr(), Dim: 8, CollectionPrefix: a.cfg.CollectionPrefix, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Get(ctx, memory.CollectionMemories, "acme", []string{"m1"})
	if err != nil || len(got) != 1 || got[0].ID != "m1" {
		t.Fatalf("second Open sees %+v, %v", got, err)
	}
}

func TestOpenRefusesOtherDimension(t *testing.T) {
	srv := startFake(t)
	a := open(t, Config{Address: srv.Addr(), Dim: 8})
	_, err := Open(context.Background(), Config{Address: srv.Addr(), Dim: 16, CollectionPrefix: a.cfg.CollectionPrefix, Logger: quietLogger()})
	var de *schema.DimensionError
	if !memory.IsInvalid(err) || !errors.As(err, &de) || de.Stored != 8 || de.Want != 16 || !strings.Contains(err.Error(), "reindex") {
		t.Fatalf("Open with another dimension = %v, want EINVALID naming 8 and 16 and saying to reindex", err)
	}
}

func TestOpenRefusesOtherMetric(t *testing.T) {
	srv := startFake(t)
	a := open(t, Config{Address: srv.Addr(), Dim: 8})
	_, err := Open(context.Background(), Config{Address: srv.Addr(), Dim: 8, Metric: "IP", CollectionPrefix: a.cfg.CollectionPrefix, Logger: quietLogger()})
	if err == nil || !strings.Contains(err.Error(), "metric COSINE") || !strings.Contains(err.Error(), "asks for IP") {
		t.Fatalf("Open with another metric = %v", err)
	}
}

func TestOpenReloadsReleasedCollection(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 8})
	q := make([]float32, 8)
	q[0] = 1
	f := memory.VectorFilter{Tenant: "acme"}

	srv.Release(x.specs[memory.CollectionMemories].Name)
	_, err := x.Search(ctx, memory.CollectionMemories, q, f, 5)
	if err == nil || !strings.Contains(err.Error(), "not loaded") || !strings.Contains(err.Error(), "restart hindsight") {
		t.Fatalf("search of a released collection = %v, want a not-loaded error that says what to do", err)
	}
	if _, err := x.List(ctx, memory.CollectionMemories, f, "", 10); err == nil || !strings.Contains(err.Error(), "not loaded") {
		t.Fatalf("list of a released collection = %v", err)
	}

	y, err := Open(ctx, Config{Address: srv.Addr(), Dim: 8, CollectionPrefix: x.cfg.CollectionPrefix, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if _, err := x.Search(ctx, memory.CollectionMemories, q, f, 5); err != nil {
		t.Fatalf("search after Open loaded the collection again: %v", err)
	}
}

func TestSearchCollectionOfOtherDimension(t *testing.T) {
	// The collections are rebuilt for another embedder while an old
	// process still runs: its searches reach Milvus and fail there.
	srv := startFake(t)
	ctx := context.Background()
	old := open(t, Config{Address: srv.Addr(), Dim: 8})
	if err := old.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	open(t, Config{Address: srv.Addr(), Dim: 16, CollectionPrefix: old.cfg.CollectionPrefix})
	_, err := old.Search(ctx, memory.CollectionMemories, make([]float32, 8), memory.VectorFilter{Tenant: "acme"}, 5)
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "vector dimension mismatch") || !strings.Contains(err.Error(), "reindex") {
		t.Fatalf("search against a 16-dim collection = %v, want EINVALID carrying Milvus' reason and saying to reindex", err)
	}
}

func TestBadExpressionIsReported(t *testing.T) {
	srv := startFake(t)
	x := open(t, Config{Address: srv.Addr(), Dim: 8})
	name := x.specs[memory.CollectionMemories].Name
	for _, expr := range []string{`tenant == "a" ||| x`, `tenant like "a%"`, `no_such_field == 1`, `confidence == "high"`} {
		_, err := x.query(context.Background(), name, expr, scalarFields, 10)
		if memory.ErrorCode(err) != memory.EINTERNAL || !strings.Contains(err.Error(), "cannot parse expression") || !strings.Contains(err.Error(), "bug in store/milvus") {
			t.Errorf("query %q = %v, want Milvus' parse error reported as an adapter bug", expr, err)
		}
	}
}

func TestUpsertChecks(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 4})
	v := []float32{1, 0, 0, 0}
	long := memory.VectorDoc{ID: "m1", Tenant: "acme", Vector: v, TaskType: strings.Repeat("x", schema.MaxTaskTypeLength+1)}
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{long}); !memory.IsInvalid(err) || !strings.Contains(err.Error(), "task type") {
		t.Fatalf("upsert of a too long task type = %v", err)
	}
	many := memory.VectorDoc{ID: "m1", Tenant: "acme", Vector: v, Entities: make([]string, schema.MaxEntities+1)}
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{many}); !memory.IsInvalid(err) || !strings.Contains(err.Error(), "entities") {
		t.Fatalf("upsert of too many entities = %v", err)
	}
	// Milvus refuses duplicate keys in one upsert; the adapter keeps the last.
	first := memory.VectorDoc{ID: "m1", Tenant: "acme", Vector: v, Status: "live"}
	second := first
	second.Status = "cold"
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{first, second}); err != nil {
		t.Fatal(err)
	}
	got, err := x.Get(ctx, memory.CollectionMemories, "acme", []string{"m1", "m1"})
	if err != nil || len(got) != 1 || got[0].Status != "cold" {
		t.Fatalf("after upserting m1 twice in one batch: %+v, %v", got, err)
	}
}

func TestSearchRange(t *testing.T) {
	srv := startFake(t)
	ctx := context.Background()
	x := open(t, Config{Address: srv.Addr(), Dim: 4})
	q := []float32{1, 0, 0, 0}
	f := memory.VectorFilter{Tenant: "acme"}
	if hits, err := x.Search(ctx, memory.CollectionMemories, q, f, 0); err != nil || len(hits) != 0 {
		t.Fatalf("k = 0: %v, %v", hits, err)
	}
	for _, k := range []int{-1, maxWindow + 1} {
		if _, err := x.Search(ctx, memory.CollectionMemories, q, f, k); !memory.IsInvalid(err) {
			t.Fatalf("k = %d: %v, want EINVALID", k, err)
		}
	}
	if _, err := x.Search(ctx, "other", q, f, 1); !memory.IsInvalid(err) {
		t.Fatalf("unknown collection: %v, want EINVALID", err)
	}
	if _, err := x.Get(ctx, memory.CollectionMemories, "bad/tenant", []string{"a"}); !memory.IsInvalid(err) {
		t.Fatalf("Get with a bad tenant: %v, want EINVALID", err)
	}
	if err := x.Delete(ctx, memory.CollectionMemories, "", []string{"a"}); !memory.IsInvalid(err) {
		t.Fatalf("Delete without a tenant: %v, want EINVALID", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{Address: "localhost:19530", Dim: 384}).Validate(); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Dim: 384}, "address is required"},
		{Config{Address: "x:1"}, "dimension 0"},
		{Config{Address: "x:1", Dim: 8, Token: "t", Username: "u"}, "either a token"},
		{Config{Address: "x:1", Dim: 8, Consistency: "Linearizable"}, "consistency"},
		{Config{Address: "x:1", Dim: 8, Metric: "L2"}, "metric"},
		{Config{Address: "x:1", Dim: 8, CollectionPrefix: "bad-prefix"}, "prefix"},
		{Config{Address: "x:1", Dim: 8, Ef: 40000}, "ef"},
		{Config{Address: "x:1", Dim: 8, Shards: 100}, "shards"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want it to mention %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := Open(context.Background(), Config{Dim: 8}); !memory.IsInvalid(err) {
		t.Errorf("Open with a bad config = %v, want EINVALID", err)
	}
}
