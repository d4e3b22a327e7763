package merge

import (
	"context"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

// BenchmarkOfflineJudge measures one verdict against a full set of
// neighbours (DefaultMaxNeighbors), mixing English and Chinese.
func BenchmarkOfflineJudge(b *testing.B) {
	pairs, err := LoadPairs(pairsPath)
	if err != nil {
		b.Fatal(err)
	}
	var ns []memory.Neighbor
	for i, p := range pairs[:DefaultMaxNeighbors] {
		ns = append(ns, memory.Neighbor{Memory: memory.Memory{ID: p.ID, Kind: memory.KindPreference, Content: pairs[i*17%len(pairs)].Existing}, Similarity: 0.9})
	}
	c := memory.Candidate{Kind: memory.KindPreference, Content: "报表用北京时间，时间格式为 YYYY-MM-DD HH:mm。"}
	j := NewOfflineJudge(OfflineOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Judge(ctx, c, ns); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluateLabelledSet measures a full offline evaluation run.
func BenchmarkEvaluateLabelledSet(b *testing.B) {
	pairs, err := LoadPairs(pairsPath)
	if err != nil {
		b.Fatal(err)
	}
	j := NewOfflineJudge(OfflineOptions{})
	for b.Loop() {
		if _, err := Evaluate(context.Background(), j, pairs); err != nil {
			b.Fatal(err)
		}
	}
}
