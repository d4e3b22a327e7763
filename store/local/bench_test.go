package local

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// BenchmarkLocal measures the index at 10k, 100k and 1M vectors of 384
// dimensions, as `make bench` runs it:
//
//	go test -run '^$' -bench BenchmarkLocal -benchtime=1x -timeout 60m ./store/local/
//
// Each size builds one index through the public Upsert (batches of 1000,
// default config, fsync on), then runs 1000 top-10 searches with a tenant
// and kind filter. It reports:
//
//	p50_ms, p99_ms  search latency
//	recall@10       against exact search with the same filter (200 queries)
//	graph_share     share of searches answered by the graph (the rest scan)
//	upserts/s       build throughput, including the log and checkpoints
//	single_upserts/s  one-document upserts, each waiting for its fsync
//	build_s         build time
//	bytes, bytes/vec  heap held by the index after the build
//
// The data is clustered: one centre per 1000 vectors, each vector its
// centre plus Gaussian noise, normalised, so that a vector's cosine to its
// centre is about 0.75 and to an unrelated vector about 0. This is roughly
// how sentence embeddings of texts on recurring topics look. Uniform random
// vectors would be the wrong test: in 384 dimensions they are all nearly
// orthogonal, so "nearest neighbours" are noise and recall says nothing.
// Queries are fresh draws from the same distribution, not indexed vectors.
//
// 90% of the vectors belong to one tenant, the rest to ten small ones; the
// kind is one of four, independent of the cluster, so the kind filter keeps
// a quarter of the big tenant scattered over the whole graph. Searches go to
// the big tenant: at 10k it is under the exact threshold and is scanned, at
// 100k and 1M the graph answers.
func BenchmarkLocal(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%s", shortCount(n)), func(b *testing.B) { benchLocal(b, n) })
	}
}

func shortCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

const (
	benchDim     = 384
	benchBatch   = 1000
	benchQueries = 1000
	benchTruth   = 200
	benchTenant  = "big"
)

// benchFixture is one built index with its data; built once per process
// and size, however often the benchmark framework calls the function.
type benchFixture struct {
	x        *Index
	vecs     [][]float32
	kinds    []memory.Kind
	big      []int // indexes of the big tenant's documents
	queries  [][]float32
	qkinds   []memory.Kind
	build    time.Duration
	heap     uint64
	upsertsS float64
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[int]*benchFixture{}
)

func benchLocal(b *testing.B, n int) {
	fx := fixture(b, n)
	ctx := context.Background()
	lat := make([]time.Duration, benchQueries)
	graph0 := fx.x.stats.graph.Load()
	b.ResetTimer()
	for b.Loop() {
		for i, q := range fx.queries {
			f := memory.VectorFilter{Tenant: benchTenant, Kinds: []memory.Kind{fx.qkinds[i]}}
			start := time.Now()
			if _, err := fx.x.Search(ctx, memory.CollectionMemories, q, f, 10); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(start)
		}
	}
	b.StopTimer()
	graphShare := float64(fx.x.stats.graph.Load()-graph0) / float64(b.N*benchQueries)

	var sum float64
	for i := range benchTruth {
		q := fx.queries[i]
		f := memory.VectorFilter{Tenant: benchTenant, Kinds: []memory.Kind{fx.qkinds[i]}}
		got, err := fx.x.Search(ctx, memory.CollectionMemories, q, f, 10)
		if err != nil {
			b.Fatal(err)
		}
		sum += recallIDs(got, fx.truth(q, fx.qkinds[i], 10))
	}
	// One document per call, as the service writes: each waits for its
	// fsync, so this measures the latency of an acknowledged write.
	const singles = 100
	start := time.Now()
	for i := range singles {
		d := memory.VectorDoc{ID: fmt.Sprintf("single%d-%03d", b.N, i), Tenant: "small0", Vector: fx.queries[i], Kind: memory.KindFact, Status: "live"}
		if err := fx.x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}); err != nil {
			b.Fatal(err)
		}
	}
	single := time.Since(start)

	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99_ms")
	b.ReportMetric(sum/benchTruth, "recall@10")
	b.ReportMetric(graphShare, "graph_share")
	b.ReportMetric(fx.upsertsS, "upserts/s")
	b.ReportMetric(singles/single.Seconds(), "single_upserts/s")
	b.ReportMetric(fx.build.Seconds(), "build_s")
	b.ReportMetric(float64(fx.heap), "bytes")
	b.ReportMetric(float64(fx.heap)/float64(n), "bytes/vec")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fixture(b *testing.B, n int) *benchFixture {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if fx := fixtures[n]; fx != nil {
		return fx
	}
	// Drop the previous size's index before building the next.
	for k, fx := range fixtures {
		fx.x.Close()
		delete(fixtures, k)
	}
	runtime.GC()

	r := rand.New(rand.NewPCG(uint64(n), 42))
	fx := &benchFixture{}
	centres := make([][]float32, max(16, n/1000))
	for i := range centres {
		centres[i] = gaussianUnit(r, nil, 1)
	}
	draw := func() []float32 { return gaussianUnit(r, centres[r.IntN(len(centres))], 0.9) }
	fx.vecs = make([][]float32, n)
	fx.kinds = make([]memory.Kind, n)
	for i := range fx.vecs {
		fx.vecs[i] = draw()
		fx.kinds[i] = memory.Kinds[r.IntN(len(memory.Kinds))]
	}
	for range benchQueries {
		fx.queries = append(fx.queries, draw())
		fx.qkinds = append(fx.qkinds, memory.Kinds[r.IntN(len(memory.Kinds))])
	}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x, err := Open(Config{Dir: b.TempDir(), Dim: benchDim, Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	fx.x = x
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	ctx := context.Background()
	for lo := 0; lo < n; lo += benchBatch {
		batch := make([]memory.VectorDoc, 0, benchBatch)
		for i := lo; i < min(lo+benchBatch, n); i++ {
			tenant := benchTenant
			if i%10 == 9 {
				tenant = fmt.Sprintf("small%d", i/10%10)
			} else {
				fx.big = append(fx.big, i)
			}
			batch = append(batch, memory.VectorDoc{
				ID: fmt.Sprintf("m%08d", i), Tenant: tenant, Vector: fx.vecs[i], Kind: fx.kinds[i],
				TaskType: "report", Status: "live", Confidence: 0.5, Decay: 1, CreatedAt: created, UpdatedAt: created,
				Entities: []string{"csv"},
			})
		}
		if err := x.Upsert(ctx, memory.CollectionMemories, batch); err != nil {
			b.Fatal(err)
		}
	}
	fx.build = time.Since(start)
	fx.upsertsS = float64(n) / fx.build.Seconds()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	fx.heap = after.HeapInuse - before.HeapInuse
	fixtures[n] = fx
	b.Logf("n=%d: built in %s (%.0f upserts/s), index heap %d MiB", n, fx.build.Round(time.Second), fx.upsertsS, fx.heap>>20)
	return fx
}

// gaussianUnit returns centre + noise, normalised, where the noise is
// isotropic with total norm about sigma (a random unit vector for a nil
// centre).
func gaussianUnit(r *rand.Rand, centre []float32, sigma float64) []float32 {
	v := make([]float32, benchDim)
	s := sigma / math.Sqrt(benchDim)
	for i := range v {
		v[i] = float32(r.NormFloat64() * s)
		if centre != nil {
			v[i] += centre[i]
		}
	}
	return unit(v)
}

// truth is the exact top k of the big tenant's documents of one kind.
func (fx *benchFixture) truth(q []float32, kind memory.Kind, k int) []string {
	type hit struct {
		i int
		s float32
	}
	var hits []hit
	for _, i := range fx.big {
		if fx.kinds[i] == kind {
			hits = append(hits, hit{i, dot(q, fx.vecs[i])})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return a.i - b.i
	})
	ids := make([]string, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		ids = append(ids, fmt.Sprintf("m%08d", h.i))
	}
	return ids
}

func recallIDs(got []memory.VectorHit, want []string) float64 {
	found := 0
	for _, h := range got {
		if slices.Contains(want, h.Doc.ID) {
			found++
		}
	}
	return float64(found) / float64(len(want))
}
