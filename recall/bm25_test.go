package recall

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/lang"
)

// naiveBM25 scores every live document against every query term.
func naiveBM25(terms [][]string, live []bool, query string, accept func(int32) bool, k int) []kwHit {
	var n, total float64
	df := map[string]int{}
	for i := range terms {
		if !live[i] {
			continue
		}
		n++
		total += float64(len(terms[i]))
		seen := map[string]bool{}
		for _, t := range terms[i] {
			if !seen[t] {
				df[t]++
				seen[t] = true
			}
		}
	}
	q := lang.Terms(query)
	slices.Sort(q)
	q = slices.Compact(q)
	var hits []kwHit
	for i := range terms {
		if !live[i] || accept != nil && !accept(int32(i)) {
			continue
		}
		s := 0.0
		for _, t := range q {
			f := 0.0
			for _, u := range terms[i] {
				if u == t {
					f++
				}
			}
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(terms[i]))/(total/n)))
		}
		if s > 0 {
			hits = append(hits, kwHit{int32(i), s})
		}
	}
	slices.SortFunc(hits, func(a, b kwHit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(a.ord - b.ord) // IDs are zero-padded ordinals below
	})
	return hits[:min(k, len(hits))]
}

func TestKeywordSearchMatchesNaiveBM25(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	zipf := rand.NewZipf(r, 1.2, 1, 300)
	word := func() string { return fmt.Sprintf("w%d", zipf.Uint64()) }
	x := newKeywordIndex()
	var docs []string
	var terms [][]string
	var live []bool
	for i := range 2000 {
		ws := make([]string, 3+r.IntN(20))
		for j := range ws {
			ws[j] = word()
		}
		docs = append(docs, strings.Join(ws, " "))
		terms = append(terms, lang.Terms(docs[i]))
		live = append(live, true)
		if ord := x.add(fmt.Sprintf("%06d", i), docs[i]); int(ord) != i {
			t.Fatalf("ordinal %d for document %d", ord, i)
		}
	}
	// Remove some, so statistics and postings must follow.
	for i := 0; i < 2000; i += 7 {
		x.remove(int32(i))
		live[i] = false
	}
	// Most documents pass the filter, or few (as in a time range): with
	// few, the k-th best is found late, if at all.
	accepts := []func(o int32) bool{
		func(o int32) bool { return o%3 != 0 },
		func(o int32) bool { return o%97 == 5 },
	}
	for qi := range 300 {
		accept := accepts[qi%2]
		// Short queries, and long ones (a whole text with its
		// translations), whose search closes part-way through.
		n := 1 + r.IntN(6)
		if qi >= 200 {
			n = 20 + r.IntN(200)
		}
		q := make([]string, n)
		for j := range q {
			q[j] = word()
		}
		query := strings.Join(q, " ")
		all := naiveBM25(terms, live, query, accept, 50)
		for _, k := range []int{1, 10, 50} {
			got := x.search(lang.Terms(query), accept, k)
			want := all[:min(k, len(all))]
			if len(got) != len(want) {
				t.Fatalf("query %d %q k=%d: %d hits, want %d", qi, query, k, len(got), len(want))
			}
			for i := range got {
				if got[i].ord != want[i].ord || math.Abs(got[i].score-want[i].score) > 1e-9 {
					t.Fatalf("query %d %q k=%d: hit %d = %+v, want %+v", qi, query, k, i, got[i], want[i])
				}
			}
		}
	}
}
