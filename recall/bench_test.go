package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/memory"
)

// synthetic returns n memories of about 15 words drawn from a Zipf
// distribution over a 20,000-word vocabulary, like real text: a few words
// are everywhere, most are rare.
func synthetic(tenant string, n int, r *rand.Rand) []memory.Memory {
	zipf := rand.NewZipf(r, 1.1, 2, 19999)
	out := make([]memory.Memory, n)
	for i := range out {
		words := make([]string, 15)
		for j := range words {
			words[j] = fmt.Sprintf("w%d", zipf.Uint64())
		}
		out[i] = mem(tenant, fmt.Sprintf("m%07d", i), strings.Join(words, " "), time.Duration(i)*time.Minute)
	}
	return out
}

// benchRecall measures recall latency over a store of n memories and
// reports its p50 and p99 over 300 queries of 4 words.
func benchRecall(b *testing.B, n int, hybrid bool) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	store := memory.NewMemStore()
	deps := Deps{Memories: store, Clock: fixedClock(base)}
	ideps := index.Deps{Memories: store}
	if hybrid {
		emb := offline.NewEmbedder(0)
		vectors := memory.NewMemIndex(emb.Dim())
		deps.Index, deps.Embedder = vectors, emb
		ideps.Index, ideps.Embedder = vectors, emb
	}
	eng, err := New(Config{NoUsage: true}, deps)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	ix, err := index.New(ideps, 0)
	if err != nil {
		b.Fatal(err)
	}
	ms := synthetic("acme", n, r)
	for start := 0; start < len(ms); start += 1000 {
		if err := ix.Write(ctx, ms[start:min(start+1000, len(ms))]); err != nil {
			b.Fatal(err)
		}
	}
	zipf := rand.NewZipf(r, 1.1, 2, 19999)
	queries := make([]memory.Query, 300)
	for i := range queries {
		queries[i] = memory.Query{Tenant: "acme", TopK: 10, Text: fmt.Sprintf("w%d w%d w%d w%d", zipf.Uint64(), zipf.Uint64(), zipf.Uint64(), zipf.Uint64())}
	}
	if _, err := eng.Recall(ctx, queries[0]); err != nil { // load the cache
		b.Fatal(err)
	}
	b.ResetTimer()
	var took []time.Duration
	for b.Loop() {
		took = took[:0]
		for _, q := range queries {
			t0 := time.Now()
			if _, err := eng.Recall(ctx, q); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(t0))
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkRecall shows what the engine itself costs as a store grows:
// keyword-only (the in-process BM25 side and the rerank, bounded pools of
// 50) up to 100,000 memories, and hybrid with the exact in-memory vector
// index, whose linear scan is the index's cost, not the engine's.
func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("keyword/n=%d", n), func(b *testing.B) { benchRecall(b, n, false) })
	}
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("hybrid-exact/n=%d", n), func(b *testing.B) { benchRecall(b, n, true) })
	}
}
