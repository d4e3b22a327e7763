package recall

import (
	"math"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/lang"
)

// BM25 parameters (Robertson and Zaragoza's usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// keywordIndex is an incremental BM25 index over lang.Terms. Documents are
// addressed by a dense ordinal so that scoring accumulates into a slice;
// ordinals of removed documents are reused. It is not safe for concurrent
// use; the tenant cache guards it.
type keywordIndex struct {
	docs     []kwDoc
	free     []int32
	postings map[string]map[int32]int32 // term → ordinal → term frequency
	live     int
	totalLen int
}

type kwDoc struct {
	id     string   // breaks score ties, so rankings do not depend on insertion order
	terms  []string // distinct terms, for removal
	length int      // number of terms, for length normalisation
	live   bool
}

func newKeywordIndex() *keywordIndex {
	return &keywordIndex{postings: map[string]map[int32]int32{}}
}

// add indexes text under id and returns its ordinal.
func (x *keywordIndex) add(id, text string) int32 {
	terms := lang.Terms(text)
	tf := make(map[string]int32, len(terms))
	for _, t := range terms {
		tf[t]++
	}
	var ord int32
	if n := len(x.free); n > 0 {
		ord, x.free = x.free[n-1], x.free[:n-1]
	} else {
		ord = int32(len(x.docs))
		x.docs = append(x.docs, kwDoc{})
	}
	d := kwDoc{id: id, terms: make([]string, 0, len(tf)), length: len(terms), live: true}
	for t, n := range tf {
		p := x.postings[t]
		if p == nil {
			p = map[int32]int32{}
			x.postings[t] = p
		}
		p[ord] = n
		d.terms = append(d.terms, t)
	}
	x.docs[ord] = d
	x.live++
	x.totalLen += d.length
	return ord
}

// remove drops the document at ord.
func (x *keywordIndex) remove(ord int32) {
	d := x.docs[ord]
	if !d.live {
		return
	}
	for _, t := range d.terms {
		p := x.postings[t]
		delete(p, ord)
		if len(p) == 0 {
			delete(x.postings, t)
		}
	}
	x.docs[ord] = kwDoc{}
	x.free = append(x.free, ord)
	x.live--
	x.totalLen -= d.length
}

// kwHit is a scored ordinal.
type kwHit struct {
	ord   int32
	score float64
}

// search scores the documents that share a term with the query and that
// accept admits, and returns the best k, highest first. Query terms count
// once each. The cost is the total length of the query terms' postings.
func (x *keywordIndex) search(queryTerms []string, accept func(int32) bool, k int) []kwHit {
	if x.live == 0 || k <= 0 {
		return nil
	}
	avg := float64(x.totalLen) / float64(x.live)
	if avg == 0 {
		avg = 1
	}
	scores := map[int32]float64{}
	seen := map[string]bool{}
	for _, t := range queryTerms {
		if seen[t] {
			continue
		}
		seen[t] = true
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		df := float64(len(p))
		idf := math.Log(1 + (float64(x.live)-df+0.5)/(df+0.5))
		for ord, tf := range p {
			f := float64(tf)
			norm := f + bm25K1*(1-bm25B+bm25B*float64(x.docs[ord].length)/avg)
			scores[ord] += idf * f * (bm25K1 + 1) / norm
		}
	}
	hits := make([]kwHit, 0, len(scores))
	for ord, s := range scores {
		if accept == nil || accept(ord) {
			hits = append(hits, kwHit{ord, s})
		}
	}
	slices.SortFunc(hits, func(a, b kwHit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(x.docs[a.ord].id, x.docs[b.ord].id)
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}
