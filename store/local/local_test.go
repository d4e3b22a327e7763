package local

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func open(t *testing.T, cfg Config) *Index {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Logger = quiet()
	x, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// abandon drops x as a crash would: no checkpoint, files closed as the
// kernel closes them.
func abandon(x *Index) {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	close(x.done)
	x.wg.Wait()
	x.wal.mu.Lock()
	x.wal.f.Close()
	x.wal.err = errClosed
	x.wal.mu.Unlock()
	x.lock.Close()
}

func TestAcceptance(t *testing.T) {
	storetest.TestVectorIndex(t, func(t *testing.T, dim int) memory.VectorIndex {
		return open(t, Config{Dim: dim})
	})
}

// TestAcceptanceGraph runs the suite with every partition searched through
// the graph, so that the ANN path must select and rank exactly as the
// reference does (the suite's partitions are small enough for the graph
// search to be exhaustive).
func TestAcceptanceGraph(t *testing.T) {
	storetest.TestVectorIndex(t, func(t *testing.T, dim int) memory.VectorIndex {
		return open(t, Config{Dim: dim, ExactThreshold: 1})
	})
}

// TestAcceptanceReopened runs the suite through an index that is reopened
// after every write, from the log alone, so that every field must survive
// the log's encoding.
func TestAcceptanceReopened(t *testing.T) {
	storetest.TestVectorIndex(t, func(t *testing.T, dim int) memory.VectorIndex {
		return &reopening{t: t, dir: t.TempDir(), dim: dim}
	})
}

// reopening is a VectorIndex that crashes and reopens its Index after
// every write.
type reopening struct {
	t   *testing.T
	dir string
	dim int
	x   *Index
}

func (r *reopening) index() *Index {
	if r.x == nil {
		x, err := Open(Config{Dir: r.dir, Dim: r.dim, Logger: quiet()})
		if err != nil {
			r.t.Fatal(err)
		}
		r.x = x
		r.t.Cleanup(func() { r.x.Close() })
	}
	return r.x
}

func (r *reopening) crash() {
	abandon(r.x)
	x, err := Open(Config{Dir: r.dir, Dim: r.dim, Logger: quiet()})
	if err != nil {
		r.t.Fatal(err)
	}
	r.x = x
}

func (r *reopening) Upsert(ctx context.Context, c memory.Collection, docs []memory.VectorDoc) error {
	err := r.index().Upsert(ctx, c, docs)
	r.crash()
	return err
}

func (r *reopening) Delete(ctx context.Context, c memory.Collection, tenant string, ids []string) error {
	err := r.index().Delete(ctx, c, tenant, ids)
	r.crash()
	return err
}

func (r *reopening) Search(ctx context.Context, c memory.Collection, v []float32, f memory.VectorFilter, k int) ([]memory.VectorHit, error) {
	return r.index().Search(ctx, c, v, f, k)
}

func (r *reopening) Get(ctx context.Context, c memory.Collection, tenant string, ids []string) ([]memory.VectorDoc, error) {
	return r.index().Get(ctx, c, tenant, ids)
}

func (r *reopening) List(ctx context.Context, c memory.Collection, f memory.VectorFilter, after string, limit int) ([]memory.VectorDoc, error) {
	return r.index().List(ctx, c, f, after, limit)
}

func (r *reopening) Close() error { return r.index().Close() }

func testDoc(r *rand.Rand, tenant, id string, dim int) memory.VectorDoc {
	return memory.VectorDoc{
		ID: id, Tenant: tenant, Vector: storetest.Unit(r, dim), Kind: memory.Kinds[r.IntN(len(memory.Kinds))],
		TaskType: "report", Status: "live", Confidence: r.Float64(), Decay: 1,
		CreatedAt: time.Unix(r.Int64N(2e9), r.Int64N(1e9)).UTC(), UpdatedAt: time.Time{},
		RecallCount: r.IntN(10), Pinned: r.IntN(2) == 0, Entities: []string{"报表", `o"q`},
	}
}

func sameDoc(a, b memory.VectorDoc) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) {
		return false
	}
	a.CreatedAt, a.UpdatedAt, b.CreatedAt, b.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func TestSnapshotRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	x := open(t, Config{Dir: dir, Dim: 8, ExactThreshold: 10})
	var docs []memory.VectorDoc
	for i := range 300 {
		docs = append(docs, testDoc(r, "acme", fmt.Sprintf("d%03d", i), 8))
	}
	docs[0].Vector = make([]float32, 8) // a zero vector
	if err := x.Upsert(ctx, memory.CollectionMemories, docs); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(ctx, memory.CollectionMemories, "acme", []string{"d001", "d002"}); err != nil {
		t.Fatal(err)
	}
	q := storetest.Unit(r, 8)
	f := memory.VectorFilter{Tenant: "acme", Kinds: []memory.Kind{memory.KindLesson}}
	before, err := x.Search(ctx, memory.CollectionMemories, q, f, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil { // checkpoints: the next Open reads snapshots only
		t.Fatal(err)
	}
	if seqs, _ := segments(dir); len(seqs) != 1 {
		t.Fatalf("segments after Close = %v, want only the fresh one", seqs)
	}
	if info, err := os.Stat(filepath.Join(dir, "wal", fmt.Sprintf("%016d.log", 2))); err != nil || info.Size() != 0 {
		t.Fatalf("the log after a checkpoint: %v, %v", info, err)
	}

	y := open(t, Config{Dir: dir, Dim: 8, ExactThreshold: 10})
	got, err := y.Get(ctx, memory.CollectionMemories, "acme", []string{"d000", "d001", "d150"})
	if err != nil || len(got) != 2 || !sameDoc(got[0], docs[0]) || !sameDoc(got[1], docs[150]) {
		t.Fatalf("Get after reopening = %+v, %v", got, err)
	}
	after, err := y.Search(ctx, memory.CollectionMemories, q, f, 10)
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Fatalf("search before and after reopening differ:\n%+v\n%+v", before, after)
	}
	st := y.parts[partitionKey{memory.CollectionMemories, "acme"}].st
	if st.nLive != 298 || st.graph.len() != 300 || st.graph.maxLevel < 0 {
		t.Fatalf("reloaded partition: %d live of %d nodes, max level %d", st.nLive, st.graph.len(), st.graph.maxLevel)
	}
}

func TestTornTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	x := open(t, Config{Dir: dir, Dim: 4})
	for i := range 5 {
		if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{testDoc(r, "acme", fmt.Sprintf("d%d", i), 4)}); err != nil {
			t.Fatal(err)
		}
	}
	abandon(x)
	seg := segmentPath(dir, 1)
	info, _ := os.Stat(seg)
	for _, tear := range []struct {
		name string
		do   func() error
	}{
		{"half a record", func() error {
			return os.Truncate(seg, info.Size()-10)
		}},
		{"garbage after the records", func() error {
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 5, 6})
			return err
		}},
		{"zeros after the records", func() error {
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write(make([]byte, 4096))
			return err
		}},
	} {
		t.Run(tear.name, func(t *testing.T) {
			if err := tear.do(); err != nil {
				t.Fatal(err)
			}
			y, err := Open(Config{Dir: dir, Dim: 4, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := y.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: "acme"}, "", 0)
			want := 5
			if tear.name == "half a record" {
				want = 4 // the torn record was the fifth write
			}
			if len(got) != want {
				t.Fatalf("after tearing: %d documents, want %d", len(got), want)
			}
			// The torn bytes are gone, so a new write lands where recovery
			// will find it.
			if err := y.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{testDoc(r, "acme", "d4", 4)}); err != nil {
				t.Fatal(err)
			}
			abandon(y)
			z, err := Open(Config{Dir: dir, Dim: 4, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer abandon(z)
			if got, _ := z.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: "acme"}, "", 0); len(got) != 5 {
				t.Fatalf("a write after recovery was lost: %d documents", len(got))
			}
			info, _ = os.Stat(seg)
		})
	}
}

func TestCorruptionIsAnError(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	x := open(t, Config{Dir: dir, Dim: 4})
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{testDoc(r, "acme", "a", 4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.wal.rotate(); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{testDoc(r, "acme", "b", 4)}); err != nil {
		t.Fatal(err)
	}
	abandon(x)
	// A flipped byte in a segment that is not the last is not a torn write.
	b, _ := os.ReadFile(segmentPath(dir, 1))
	b[20] ^= 0xff
	os.WriteFile(segmentPath(dir, 1), b, 0o644)
	_, err := Open(Config{Dir: dir, Dim: 4, Logger: quiet()})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("Open of a corrupt log = %v", err)
	}
}

func TestOpenChecks(t *testing.T) {
	dir := t.TempDir()
	x := open(t, Config{Dir: dir, Dim: 8})
	if _, err := Open(Config{Dir: dir, Dim: 8, Logger: quiet()}); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("second Open of a locked directory = %v", err)
	}
	x.Close()
	_, err := Open(Config{Dir: dir, Dim: 16, Logger: quiet()})
	if !memory.IsInvalid(err) || !strings.Contains(err.Error(), "dimension 8") || !strings.Contains(err.Error(), "16") || !strings.Contains(err.Error(), "reindex") {
		t.Fatalf("Open with another dimension = %v", err)
	}
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Dim: 8}, "dir is required"},
		{Config{Dir: dir}, "dimension 0"},
		{Config{Dir: dir, Dim: 8, HNSW: HNSWConfig{M: 1}}, "HNSW M"},
		{Config{Dir: dir, Dim: 8, Sync: 7}, "sync policy"},
	} {
		if _, err := Open(tt.cfg); !memory.IsInvalid(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%+v) = %v, want EINVALID mentioning %q", tt.cfg, err, tt.want)
		}
	}
}

func TestRejectsBadVectors(t *testing.T) {
	ctx := context.Background()
	x := open(t, Config{Dim: 2})
	nan := float32(0)
	nan /= nan
	err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{{ID: "a", Tenant: "acme", Vector: []float32{nan, 1}}})
	if !memory.IsInvalid(err) {
		t.Fatalf("upsert of a NaN vector = %v", err)
	}
	if _, err := x.Search(ctx, memory.CollectionMemories, []float32{nan, 1}, memory.VectorFilter{Tenant: "acme"}, 1); !memory.IsInvalid(err) {
		t.Fatalf("search with a NaN vector = %v", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{{ID: "a", Tenant: "acme", Vector: []float32{0, 1}}}); err == nil {
		t.Fatal("upsert after Close succeeded")
	}
}

// clustered returns n unit vectors around a few random centres, the shape
// embeddings of related texts have.
func clustered(r *rand.Rand, n, dim, clusters int, spread float64) [][]float32 {
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = storetest.Unit(r, dim)
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*spread/float64(dim)*8)
		}
		out[i] = unit(v)
	}
	return out
}

// recall is the share of want's IDs found in got.
func recall(got, want []memory.VectorHit) float64 {
	if len(want) == 0 {
		return 1
	}
	ids := map[string]bool{}
	for _, h := range got {
		ids[h.Doc.ID] = true
	}
	n := 0
	for _, h := range want {
		if ids[h.Doc.ID] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// TestGraphRecall checks the ANN path against exact search under a tenant
// and kind filter, before and after deletes and vector changes.
func TestGraphRecall(t *testing.T) {
	ctx := context.Background()
	n, dim := 3000, 32
	if raceEnabled {
		n = 1000
	}
	r := rand.New(rand.NewPCG(7, 8))
	x := open(t, Config{Dim: dim, ExactThreshold: 100})
	vecs := clustered(r, n, dim, 40, 0.6)
	var docs []memory.VectorDoc
	for i, v := range vecs {
		d := testDoc(r, "acme", fmt.Sprintf("d%05d", i), dim)
		d.Vector = v
		docs = append(docs, d)
	}
	for chunk := range slices.Chunk(docs, 500) {
		if err := x.Upsert(ctx, memory.CollectionMemories, chunk); err != nil {
			t.Fatal(err)
		}
	}
	ref := memory.NewMemIndex(dim)
	ref.Upsert(ctx, memory.CollectionMemories, docs)

	measure := func(stage string) {
		t.Helper()
		var sum float64
		const queries = 60
		graphBefore := x.stats.graph.Load()
		for range queries {
			q := clustered(r, 1, dim, 1, 0.6)[0]
			f := memory.VectorFilter{Tenant: "acme", Kinds: []memory.Kind{memory.Kinds[r.IntN(4)]}}
			got, err := x.Search(ctx, memory.CollectionMemories, q, f, 10)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := ref.Search(ctx, memory.CollectionMemories, q, f, 10)
			for _, h := range got {
				if !f.Match(h.Doc) {
					t.Fatalf("%s: hit %s does not match the filter", stage, h.Doc.ID)
				}
				if ds, _ := ref.Get(ctx, memory.CollectionMemories, "acme", []string{h.Doc.ID}); len(ds) == 0 {
					t.Fatalf("%s: hit %s was deleted", stage, h.Doc.ID)
				}
			}
			sum += recall(got, want)
		}
		if n := x.stats.graph.Load() - graphBefore; n != queries {
			t.Fatalf("%s: %d of %d searches used the graph", stage, n, queries)
		}
		if avg := sum / queries; avg < 0.95 {
			t.Fatalf("%s: recall@10 = %.3f, want at least 0.95", stage, avg)
		} else {
			t.Logf("%s: recall@10 = %.3f", stage, avg)
		}
	}
	measure("fresh")

	// Delete a fifth, move another fifth to new vectors.
	var del []string
	var moved []memory.VectorDoc
	for i := range n {
		switch i % 5 {
		case 0:
			del = append(del, docs[i].ID)
		case 1:
			d := docs[i]
			d.Vector = clustered(r, 1, dim, 1, 0.6)[0]
			moved = append(moved, d)
		}
	}
	if err := x.Delete(ctx, memory.CollectionMemories, "acme", del); err != nil {
		t.Fatal(err)
	}
	ref.Delete(ctx, memory.CollectionMemories, "acme", del)
	if err := x.Upsert(ctx, memory.CollectionMemories, moved); err != nil {
		t.Fatal(err)
	}
	ref.Upsert(ctx, memory.CollectionMemories, moved)
	measure("after deletes and moves")

	// Tombstones are now 40% of the nodes: a checkpoint rebuilds the graph.
	if err := x.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	st := x.parts[partitionKey{memory.CollectionMemories, "acme"}].st
	if st.tombstones() != 0 || st.nLive != n-len(del) {
		t.Fatalf("after compaction: %d tombstones, %d live", st.tombstones(), st.nLive)
	}
	measure("after compaction")
}

// TestSelectiveFilterFallsBack checks that a filter matching a few
// documents of a large partition still finds all of them.
func TestSelectiveFilterFallsBack(t *testing.T) {
	ctx := context.Background()
	const n, dim = 3000, 16
	r := rand.New(rand.NewPCG(9, 10))
	// A small graph budget (ef·M0) makes giving up reachable at this size.
	x := open(t, Config{Dim: dim, ExactThreshold: 100, HNSW: HNSWConfig{M: 4, EfConstruction: 32, EfSearch: 8}})
	var docs []memory.VectorDoc
	for i := range n {
		d := testDoc(r, "acme", fmt.Sprintf("d%05d", i), dim)
		d.Entities = nil
		if i%300 == 0 {
			d.Entities = []string{"rare"} // selective in a way kind and status estimates miss
		}
		docs = append(docs, d)
	}
	if err := x.Upsert(ctx, memory.CollectionMemories, docs); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Search(ctx, memory.CollectionMemories, storetest.Unit(r, dim), memory.VectorFilter{Tenant: "acme", Entities: []string{"rare"}}, 20)
	if err != nil || len(hits) != 10 {
		t.Fatalf("search for the 10 rare documents = %d hits, %v", len(hits), err)
	}
	if x.stats.fallback.Load() != 1 {
		t.Fatalf("the graph search did not give up and scan: %d fallbacks", x.stats.fallback.Load())
	}
}

// TestConcurrentUse runs writers and readers together; run it with -race.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	const dim = 8
	x := open(t, Config{Dim: dim, ExactThreshold: 50, SnapshotBytes: 16 << 10})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			tenant := []string{"a", "b"}[w%2]
			for i := range 60 {
				batch := []memory.VectorDoc{testDoc(r, tenant, fmt.Sprintf("w%d-%03d", w, i), dim), testDoc(r, tenant, fmt.Sprintf("w%d-%03d-x", w, i), dim)}
				if err := x.Upsert(ctx, memory.CollectionMemories, batch); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if err := x.Delete(ctx, memory.CollectionMemories, tenant, []string{batch[1].ID}); err != nil {
						t.Error(err)
						return
					}
				}
				if _, err := x.Search(ctx, memory.CollectionMemories, batch[0].Vector, memory.VectorFilter{Tenant: tenant}, 5); err != nil {
					t.Error(err)
					return
				}
				if _, err := x.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: tenant}, "", 10); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if err := x.Checkpoint(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	for _, tenant := range []string{"a", "b"} {
		got, err := x.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: tenant}, "", 0)
		// Two writers per tenant, each writing 60 pairs and deleting 20.
		if want := 2 * (2*60 - 20); err != nil || len(got) != want {
			t.Fatalf("tenant %s holds %d documents, %v; want %d", tenant, len(got), err, want)
		}
	}
}

// reachable counts the nodes reachable from the entry point on layer 0.
func reachable(g *graph) int {
	seen := map[uint32]bool{g.entry: true}
	stack := []uint32{g.entry}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range g.neighbors(n, 0) {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return len(seen)
}

// TestGraphConnected checks that graphs built in parallel keep every node
// reachable. Linking nodes in parallel once stranded islands of nodes that
// had linked to a half-linked neighbour.
func TestGraphConnected(t *testing.T) {
	for seed := range 20 {
		for _, workers := range []int{1, 2} {
			r := rand.New(rand.NewPCG(uint64(seed), 6))
			st := newState(16, HNSWConfig{M: 16, EfConstruction: 128}, fmt.Sprint(seed))
			var docs []memory.VectorDoc
			for i := range 200 {
				docs = append(docs, memory.VectorDoc{ID: fmt.Sprint(i), Tenant: "a", Vector: storetest.Unit(r, 16)})
			}
			st.linkNodes(st.upsert(docs), workers)
			if n := reachable(st.graph); n < 198 {
				t.Fatalf("seed %d, %d workers: %d of 200 nodes reachable", seed, workers, n)
			}
		}
	}
}

// TestExactMatchesFullScan checks that the two-pass exact search (quantized
// scores with error bounds, then float32) returns exactly what scoring
// every node in float32 returns, on clustered data full of near ties.
func TestExactMatchesFullScan(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const dim = 384
	st := newState(dim, HNSWConfig{M: 8, EfConstruction: 16}, "a")
	var docs []memory.VectorDoc
	for i, v := range clustered(r, 3000, dim, 5, 0.3) {
		docs = append(docs, memory.VectorDoc{ID: fmt.Sprintf("d%04d", i), Tenant: "a", Vector: v, Kind: memory.Kinds[i%4]})
	}
	docs[7].Vector = make([]float32, dim)         // zero vector
	docs[8].Vector = slices.Clone(docs[9].Vector) // an exact tie, broken by ID
	st.upsert(docs)
	for trial := range 30 {
		q := clustered(r, 1, dim, 1, 0.3)[0]
		if trial == 0 {
			q = unit(docs[9].Vector)
		}
		f := memory.VectorFilter{Tenant: "a"}
		if trial%2 == 1 {
			f.Kinds = []memory.Kind{memory.KindFact}
		}
		pf := st.prefilter(f)
		var all []uint32
		for i := range st.live {
			if st.accepts(uint32(i), pf, &f) {
				all = append(all, uint32(i))
			}
		}
		for _, k := range []int{1, 10, 100} {
			got, want := st.exact(q, f, pf, k), st.topExact(q, all, k)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, k=%d: two-pass exact differs from a full scan:\n%v\n%v", trial, k, hitIDs(got), hitIDs(want))
			}
		}
	}
}

func hitIDs(hs []memory.VectorHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Doc.ID)
	}
	return out
}

// TestPrefilterCoversFilter fails when memory.VectorFilter gains a field:
// state.prefilter must then learn whether the new field is residual (needs
// Match), or the fast path of accepts would ignore it.
func TestPrefilterCoversFilter(t *testing.T) {
	known := []string{"Tenant", "Scopes", "Kinds", "TaskType", "Statuses", "MinConfidence", "Entities", "CreatedAfter", "CreatedBefore"}
	var fields []string
	for f := range reflect.TypeFor[memory.VectorFilter]().Fields() {
		fields = append(fields, f.Name)
	}
	if !slices.Equal(fields, known) {
		t.Fatalf("memory.VectorFilter has fields %v, prefilter knows %v: update prefilter's residual", fields, known)
	}
	// Every residual field alone must route through Match.
	st := newState(2, HNSWConfig{M: 4, EfConstruction: 8}, "a")
	for _, f := range []memory.VectorFilter{{TaskType: "x"}, {MinConfidence: 0.1}, {Entities: []string{"x"}}} {
		if !st.prefilter(f).residual {
			t.Errorf("filter %+v is not residual", f)
		}
	}
}

// TestAcceptsMatchesMatch checks that the byte codes and the creation
// seconds column select exactly what Match selects: scopes (an empty one
// is shared), creation bounds inside a second and before 1970.
func TestAcceptsMatchesMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	st := newState(2, HNSWConfig{M: 4, EfConstruction: 8}, "a")
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	scopes := []memory.Scope{"", memory.SharedScope, "user:ann", "agent:bot"}
	at := func() time.Time {
		// A few whole seconds apart, with fractions, some before 1970.
		t := base.Add(time.Duration(r.IntN(40)-20)*time.Second + time.Duration(r.IntN(3))*300*time.Millisecond)
		if r.IntN(10) == 0 {
			t = time.Unix(-int64(r.IntN(5)), int64(r.IntN(3))*300e6).UTC()
		}
		return t
	}
	var docs []memory.VectorDoc
	for i := range 400 {
		docs = append(docs, memory.VectorDoc{ID: fmt.Sprint(i), Tenant: "a", Vector: []float32{1, float32(i)},
			Kind: memory.Kinds[r.IntN(len(memory.Kinds))], Scope: scopes[r.IntN(len(scopes))], CreatedAt: at()})
	}
	st.upsert(docs)
	for trial := range 500 {
		f := memory.VectorFilter{Tenant: "a"}
		for range r.IntN(3) {
			f.Scopes = append(f.Scopes, scopes[r.IntN(len(scopes))])
		}
		if r.IntN(2) == 0 {
			f.CreatedAfter = at()
		}
		if r.IntN(2) == 0 {
			f.CreatedBefore = at()
		}
		if r.IntN(3) == 0 {
			f.Kinds = []memory.Kind{memory.Kinds[r.IntN(len(memory.Kinds))]}
		}
		pf, admitted := st.prefilter(f), 0
		for i, d := range docs {
			got, want := st.accepts(uint32(i), pf, &f), f.Match(d)
			if got != want {
				t.Fatalf("trial %d: filter %+v on %v (scope %q): accepts %v, Match %v", trial, f, d.CreatedAt, d.Scope, got, want)
			}
			if got {
				admitted++
			}
		}
		// Restricted on one field, the estimate counts exactly.
		if f.Kinds == nil && (f.Scopes == nil || !pf.created.Bounded()) && pf.estimate < admitted {
			t.Fatalf("trial %d: filter %+v: estimate %d, %d admitted", trial, f, pf.estimate, admitted)
		}
	}
}

// TestInterningOverflow checks filters on kinds and statuses past the 255
// values that get byte codes.
func TestInterningOverflow(t *testing.T) {
	ctx := context.Background()
	x := open(t, Config{Dim: 2})
	var docs []memory.VectorDoc
	for i := range 300 {
		docs = append(docs, memory.VectorDoc{ID: fmt.Sprint(i), Tenant: "a", Vector: []float32{1, float32(i)}, Status: fmt.Sprintf("s%d", i), Kind: memory.Kind(fmt.Sprintf("k%d", i))})
	}
	if err := x.Upsert(ctx, memory.CollectionMemories, docs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []memory.VectorFilter{
		{Tenant: "a", Statuses: []string{"s299"}},
		{Tenant: "a", Kinds: []memory.Kind{"k280", "k3"}},
		{Tenant: "a", Statuses: []string{"s290"}, Kinds: []memory.Kind{"k290"}},
	} {
		got, err := x.List(ctx, memory.CollectionMemories, f, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, d := range docs {
			if f.Match(d) {
				want = append(want, d.ID)
			}
		}
		slices.Sort(want)
		var ids []string
		for _, d := range got {
			ids = append(ids, d.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("filter %+v: got %v, want %v", f, ids, want)
		}
	}
}
