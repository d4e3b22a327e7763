package milvusfake

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// best keeps exactly the first n of a full sort, ties included.
func TestBestMatchesASort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		xs := make([]int, r.IntN(300))
		for i := range xs {
			xs[i] = r.IntN(50) // many ties
		}
		n := r.IntN(60)
		byValue := func(a, b int) int { return cmp.Compare(b, a) }
		want := slices.Clone(xs)
		slices.SortFunc(want, byValue)
		want = want[:min(n, len(want))]
		if got := best(slices.Clone(xs), n, byValue); !slices.Equal(got, want) {
			t.Fatalf("trial %d: best(%d) = %v, want %v", trial, n, got, want)
		}
	}
}
