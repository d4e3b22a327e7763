package consolidate

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchItems makes n episodes of one task type (the worst case: one
// group) whose 384-dimensional vectors scatter around n/10 topics, so
// that clustering forms real clusters of about ten.
func benchItems(n int) []Item {
	const dim = 384
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	topics := make([][]float64, max(1, n/10))
	for i := range topics {
		topics[i] = make([]float64, dim)
		for d := range dim {
			topics[i][d] = rng.NormFloat64()
		}
	}
	items := make([]Item, n)
	for i := range items {
		t := topics[rng.IntN(len(topics))]
		v := make([]float32, dim)
		for d := range dim {
			v[d] = float32(t[d] + 0.5*rng.NormFloat64())
		}
		items[i] = item(fmt.Sprintf("ep_%05d", i), "data-import", i/20, v...)
	}
	return items
}

func BenchmarkCluster(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		items := benchItems(n)
		b.Run(fmt.Sprintf("n=%d/dim=384", n), func(b *testing.B) {
			b.ReportAllocs()
			var clusters [][]int
			for b.Loop() {
				var err error
				if clusters, err = Cluster(items, ClusterConfig{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(clusters)), "clusters")
		})
	}
}
