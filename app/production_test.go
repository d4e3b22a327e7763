package app_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/app"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
	"github.com/hindsight-memory/hindsight/store/local"
	"github.com/hindsight-memory/hindsight/store/milvus"
	"github.com/hindsight-memory/hindsight/store/milvus/milvusfake"
)

// Production recall: with Milvus, a replica answers a tenant's first
// recall from one hybrid search and reads of the store by ID, with no
// per-tenant load. These run against the Milvus fake (labelled as such),
// or a real Milvus when MILVUS_ADDR is set, and chDB.

// tenantMemories is the size of the tenant a fresh replica recalls from.
const tenantMemories = 10_000

// readCounter is the store as a replica sees it, counting what recall
// reads of the memories: IDs read by ID, and reads that are not by ID
// (a load of the tenant).
type readCounter struct {
	*chdb.Store
	mu      sync.Mutex
	byID    int
	unbound int
}

func (s *readCounter) Memories(ctx context.Context, f memory.MemoryFilter) ([]memory.Memory, error) {
	s.mu.Lock()
	if len(f.IDs) > 0 {
		s.byID += len(f.IDs)
	} else {
		s.unbound++
	}
	s.mu.Unlock()
	return s.Store.Memories(ctx, f)
}

func (s *readCounter) reads() (byID, unbound int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID, s.unbound
}

func chdbLib(tb testing.TB) string {
	p, err := chdb.LibPathFromEnv()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// milvusAddr is a real Milvus's address when MILVUS_ADDR is set, else a
// fresh fake's.
func milvusAddr(tb testing.TB) string {
	if addr := os.Getenv("MILVUS_ADDR"); addr != "" {
		return addr
	}
	srv, err := milvusfake.Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv.Addr()
}

var subjects = []string{"CSV export", "billing report", "deploy pipeline", "staging database", "release notes",
	"invoice PDF", "login page", "search index", "nightly backup", "metrics dashboard", "mobile build", "API gateway"}
var verbs = []string{"must use", "should avoid", "runs with", "breaks without", "is configured with", "needs"}
var objects = []string{"UTF-8 with a BOM", "the Beijing time zone", "retries with backoff", "a 30 second timeout",
	"the read replica", "gzip compression", "feature flags", "two reviewers", "the EU region", "pinned versions"}

// tenantOf writes n distinct memories of one tenant, plus the one a query
// looks for, through a runtime's indexer.
func fillTenant(tb testing.TB, rt *app.Runtime, tenant string, n int) memory.Memory {
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	mk := func(id, content string, age time.Duration) memory.Memory {
		t := at.Add(-age)
		return memory.Memory{ID: id, Tenant: tenant, Version: 1, Kind: memory.KindLesson, Content: content,
			ContentHash: memory.ContentHash(memory.KindLesson, content), Confidence: 0.6, Status: memory.StatusLive,
			Decay: 1, DecayAnchor: t, ValidFrom: t, CreatedAt: t, UpdatedAt: t}
	}
	batch := make([]memory.Memory, 0, 1000)
	for i := range n {
		content := fmt.Sprintf("The %s %s %s (team %d, ticket %d).", subjects[i%len(subjects)],
			verbs[(i/len(subjects))%len(verbs)], objects[(i/(len(subjects)*len(verbs)))%len(objects)], i%97, i)
		batch = append(batch, mk(fmt.Sprintf("m%05d", i), content, time.Duration(i)*time.Minute))
		if len(batch) == cap(batch) {
			if err := rt.Indexer.Write(ctx, batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	needle := mk("needle", "Quarterly tax filings for the Lisbon office go through the Portuguese accountant, never the US one.", time.Hour)
	if err := rt.Indexer.Write(ctx, append(batch, needle)); err != nil {
		tb.Fatal(err)
	}
	return needle
}

// production builds a runtime over the shared store and Milvus, as one
// more replica would start.
func production(tb testing.TB, store memory.EpisodicStore, addr, prefix string) *app.Runtime {
	rt, err := app.Build(context.Background(), app.Config{
		Store:  store,
		Milvus: &milvus.Config{Address: addr, CollectionPrefix: prefix, Token: os.Getenv("MILVUS_TOKEN")},
		Recall: recallConfig(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close() })
	return rt
}

func TestFreshReplicaRecallsWithoutLoading(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 10k-memory tenant")
	}
	s, err := chdb.Open(context.Background(), chdb.Config{DataDir: t.TempDir(), LibPath: chdbLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	addr, prefix := milvusAddr(t), fmt.Sprintf("hstest_%d", time.Now().UnixNano()%1e9)
	writer := production(t, s, addr, prefix)
	if !writer.Engine.Config().Stateless {
		t.Fatal("with Milvus, recall must be stateless")
	}
	needle := fillTenant(t, writer, "acme", tenantMemories)

	store := &readCounter{Store: s}
	replica := production(t, store, addr, prefix)
	resp, err := replica.Engine.Recall(context.Background(), memory.Query{Tenant: "acme", Text: "who handles tax filings for the Lisbon office?", TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].Memory.ID != needle.ID {
		t.Fatalf("first recall returned %v, want %s first", resultIDs(resp.Results), needle.ID)
	}
	if resp.Results[0].Memory.Content != needle.Content {
		t.Errorf("served %q, want the stored text", resp.Results[0].Memory.Content)
	}
	byID, unbound := store.reads()
	if unbound > 0 {
		t.Errorf("the replica read the tenant's memories %d times not by ID: a load", unbound)
	}
	// The candidates of one hybrid search at most: 50 a side.
	if limit := 2 * replica.Engine.Config().VectorCandidates; byID == 0 || byID > limit {
		t.Errorf("the replica read %d memories by ID, want between 1 and %d (the search's candidates at most)", byID, limit)
	}

	// A memory another replica writes is recalled at once: no cache to
	// catch up.
	late := needle
	late.ID, late.Content = "late", "Quarterly tax filings for the Porto office go through the same Portuguese accountant."
	late.ContentHash = memory.ContentHash(late.Kind, late.Content)
	if err := writer.Indexer.Write(context.Background(), []memory.Memory{late}); err != nil {
		t.Fatal(err)
	}
	resp, err = replica.Engine.Recall(context.Background(), memory.Query{Tenant: "acme", Text: "tax filings Porto office", TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(resultIDs(resp.Results), "late") {
		t.Errorf("recall after another replica's write returned %v, want it to include late", resultIDs(resp.Results))
	}
}

func resultIDs(rs []memory.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Memory.ID
	}
	return out
}

// BenchmarkFirstRecall measures a fresh replica's first recall of a
// 10k-memory tenant, side by side: production (stateless, Milvus fake)
// against the per-process cache over the local index, which loads the
// tenant on its first recall. It reports the first recall's p50 and p99.
//
// Every replica opens its own store handle on the data (coldStore), as
// another process would connect to ClickHouse: the memory cache of the
// handle that wrote the tenant, or of an earlier replica, never answers
// what its first recall must read from chDB.
func BenchmarkFirstRecall(b *testing.B) {
	ctx := context.Background()
	q := memory.Query{Tenant: "acme", Text: "who handles tax filings for the Lisbon office?", TopK: 5}
	b.Run("stateless-milvus-fake", func(b *testing.B) {
		dir := b.TempDir()
		s, err := chdb.Open(ctx, chdb.Config{DataDir: dir, LibPath: chdbLib(b)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		addr, prefix := milvusAddr(b), fmt.Sprintf("hsbench_%d", time.Now().UnixNano()%1e9)
		fillTenant(b, production(b, s, addr, prefix), "acme", tenantMemories)
		firstRecalls(b, dir, func(s memory.EpisodicStore) *app.Runtime { return production(b, s, addr, prefix) }, q)
	})
	b.Run("cached-local", func(b *testing.B) {
		dir := b.TempDir()
		s, err := chdb.Open(ctx, chdb.Config{DataDir: dir, LibPath: chdbLib(b)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		index := b.TempDir()
		build := func(s memory.EpisodicStore) *app.Runtime {
			rt, err := app.Build(ctx, app.Config{Store: s, Local: &local.Config{Dir: index}, Recall: recallConfig()})
			if err != nil {
				b.Fatal(err)
			}
			return rt
		}
		w := build(s)
		fillTenant(b, w, "acme", tenantMemories)
		w.Close()
		firstRecalls(b, dir, build, q)
	})
}

// coldStore opens another store handle on the chDB data in dir, whose
// memory cache is empty: what a fresh replica's client is.
func coldStore(tb testing.TB, dir string) *chdb.Store {
	s, err := chdb.Open(context.Background(), chdb.Config{DataDir: dir, LibPath: chdbLib(tb), Store: clickhouse.Config{SkipMigrate: true}})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// firstRecalls times the first recall of q by b.N fresh runtimes, each
// built (untimed) by build on a cold store over dir and closed after, and
// reports the p50 and p99 of the recalls. One more replica recalls first,
// untimed: the first query of the chDB engine after the tenant was
// written took 100–130 ms where the next took 20 (a ClickHouse server is
// warm when a replica starts), so that every timed recall is a fresh
// replica's on a running engine.
func firstRecalls(b *testing.B, dir string, build func(memory.EpisodicStore) *app.Runtime, q memory.Query) {
	// recall times one fresh replica's first recall, with the benchmark's
	// timer stopped while the replica starts and closes.
	recall := func() time.Duration {
		b.StopTimer()
		s := coldStore(b, dir)
		rt := build(s)
		b.StartTimer()
		t0 := time.Now()
		_, err := rt.Engine.Recall(context.Background(), q)
		took := time.Since(t0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		rt.Close()
		s.Close()
		b.StartTimer()
		return took
	}
	recall()
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		took = append(took, recall())
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds())/1000, "p99-ms")
}

// recallConfig records no usage, so that nothing writes in the background.
func recallConfig() recall.Config { return recall.Config{NoUsage: true} }
