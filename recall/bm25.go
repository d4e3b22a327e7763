package recall

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"sync"
	"sync/atomic"

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
	postings map[string]*posting
	live     int
	totalLen int
}

type kwDoc struct {
	id     string   // breaks score ties, so rankings do not depend on insertion order
	terms  []string // distinct terms, for removal
	length int      // number of terms, for length normalisation
	live   bool
}

// posting is one term's documents: ordinal → term frequency, and the
// same as a list in ordinal order, built by the first search after a
// change. A search walks the list: in order, its reads of the score and
// document slices are sequential, where walking the map reads them at
// random, and a frequent term's tens of thousands of documents made that
// most of a recall.
type posting struct {
	tf   map[int32]int32
	list atomic.Pointer[postingList] // nil when stale
}

type postingList struct{ ords, tfs []int32 }

// sorted returns p's list, building it when stale. Searches run under the
// cache's read lock, so two may build it at once: both build the same.
func (p *posting) sorted() *postingList {
	if l := p.list.Load(); l != nil {
		return l
	}
	l := &postingList{ords: make([]int32, 0, len(p.tf)), tfs: make([]int32, len(p.tf))}
	for o := range p.tf {
		l.ords = append(l.ords, o)
	}
	slices.Sort(l.ords)
	for i, o := range l.ords {
		l.tfs[i] = p.tf[o]
	}
	p.list.Store(l)
	return l
}

// docFreq is how many documents hold term t.
func (x *keywordIndex) docFreq(t string) int {
	if p := x.postings[t]; p != nil {
		return len(p.tf)
	}
	return 0
}

func newKeywordIndex() *keywordIndex {
	return &keywordIndex{postings: map[string]*posting{}}
}

// add indexes text under id and returns its ordinal.
func (x *keywordIndex) add(id, text string) int32 {
	// The parts of a name are other ways to find the same word, not more
	// words: the document's length is its Terms'.
	terms := lang.DocTerms(text)
	length := len(lang.Terms(text))
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
	d := kwDoc{id: id, terms: make([]string, 0, len(tf)), length: length, live: true}
	for t, n := range tf {
		p := x.postings[t]
		if p == nil {
			p = &posting{tf: map[int32]int32{}}
			x.postings[t] = p
		}
		p.tf[ord] = n
		p.list.Store(nil)
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
		delete(p.tf, ord)
		p.list.Store(nil)
		if len(p.tf) == 0 {
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

// accumulators are reused across searches: a dense score per ordinal,
// whether accept admits it once asked (admitUnknown until then), and the
// ordinals touched, so a search allocates little whatever the store's
// size.
type accumulators struct {
	score   []float64
	admit   []uint8
	touched []int32
}

const (
	admitUnknown uint8 = iota
	admitYes
	admitNo
)

var accPool = sync.Pool{New: func() any { return &accumulators{} }}

// queryTerm is one distinct query term with its postings and weight.
type queryTerm struct {
	postings *posting
	idf      float64
}

// search returns the best k documents for the query terms among those
// accept admits, highest BM25 first, ties by ID. Query terms count once
// each.
//
// It is term-at-a-time with MaxScore pruning, so that frequent terms do
// not make a large store slow: terms are scored rarest first, and once the
// k-th best admitted score exceeds the most the remaining terms could add
// to a document, no document they alone match can reach the top k, so the
// remaining terms only update the documents already scored. The result is
// the exact BM25 top k.
func (x *keywordIndex) search(queryTerms []string, accept func(int32) bool, k int) []kwHit {
	if x.live == 0 || k <= 0 {
		return nil
	}
	avg := float64(x.totalLen) / float64(x.live)
	if avg == 0 {
		avg = 1
	}
	var qs []queryTerm
	seen := map[string]bool{}
	for _, t := range queryTerms {
		if seen[t] {
			continue
		}
		seen[t] = true
		p := x.postings[t]
		if p == nil || len(p.tf) == 0 {
			continue
		}
		df := float64(len(p.tf))
		qs = append(qs, queryTerm{p, math.Log(1 + (float64(x.live)-df+0.5)/(df+0.5))})
	}
	if len(qs) == 0 {
		return nil
	}
	slices.SortFunc(qs, func(a, b queryTerm) int { return cmp.Compare(b.idf, a.idf) })
	// rest[i] bounds what terms i.. can add to one document: the tf part of
	// BM25 stays below k1+1.
	rest := make([]float64, len(qs)+1)
	for i := len(qs) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + qs[i].idf*(bm25K1+1)
	}

	acc := accPool.Get().(*accumulators)
	defer func() {
		for _, o := range acc.touched {
			acc.score[o], acc.admit[o] = 0, admitUnknown
		}
		acc.touched = acc.touched[:0]
		accPool.Put(acc)
	}()
	if len(acc.score) < len(x.docs) {
		acc.score = make([]float64, len(x.docs))
		acc.admit = make([]uint8, len(x.docs))
	}
	// accept is asked once per scored document: a filter that admits few
	// (a time range) has it asked of every one.
	admits := func(o int32) bool {
		switch acc.admit[o] {
		case admitYes:
			return true
		case admitNo:
			return false
		}
		ok := accept == nil || accept(o)
		acc.admit[o] = admitNo
		if ok {
			acc.admit[o] = admitYes
		}
		return ok
	}
	weight := func(o int32, tf int32, idf float64) float64 {
		f := float64(tf)
		return idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(x.docs[o].length)/avg))
	}
	// theta is the k-th best admitted score when last computed: scores
	// only grow, so it stays a lower bound, and once it exceeds what the
	// remaining terms could add the search is closed. Computing it is a
	// pass over the scored documents, so it is recomputed only after the
	// postings walked since reach their number: a query of hundreds of
	// terms (a long text, with its translations) checked before every
	// term made those passes most of its time.
	theta, walked := 0.0, 0
	for i, q := range qs {
		l := q.postings.sorted()
		if i > 0 && len(acc.touched) >= k && theta <= rest[i] && walked >= len(acc.touched) {
			theta, walked = x.kthAdmitted(acc, admits, k), 0
		}
		walked += len(l.ords)
		if i > 0 && theta > rest[i] {
			// Closed: only the documents already scored gain, looked up
			// in the term's map when they are far fewer than its
			// postings, else found by walking the postings.
			if 4*len(acc.touched) < len(l.ords) {
				for _, o := range acc.touched {
					if tf, ok := q.postings.tf[o]; ok {
						acc.score[o] += weight(o, tf, q.idf)
					}
				}
				continue
			}
			for j, o := range l.ords {
				if acc.score[o] != 0 {
					acc.score[o] += weight(o, l.tfs[j], q.idf)
				}
			}
			continue
		}
		for j, o := range l.ords {
			if acc.score[o] == 0 {
				acc.touched = append(acc.touched, o)
			}
			acc.score[o] += weight(o, l.tfs[j], q.idf)
		}
	}
	return x.topAdmitted(acc, admits, k)
}

// kthAdmitted is the k-th best score among scored, admitted documents (0
// when fewer are admitted).
func (x *keywordIndex) kthAdmitted(acc *accumulators, admits func(int32) bool, k int) float64 {
	hits := x.topAdmitted(acc, admits, k)
	if len(hits) < k {
		return 0
	}
	return hits[k-1].score
}

// topAdmitted selects the best k admitted documents with a bounded heap.
func (x *keywordIndex) topAdmitted(acc *accumulators, admits func(int32) bool, k int) []kwHit {
	h := &hitHeap{x: x}
	for _, o := range acc.touched {
		s := acc.score[o]
		if len(h.hits) == k && !h.better(kwHit{o, s}, h.hits[0]) {
			continue
		}
		if !admits(o) {
			continue
		}
		if len(h.hits) < k {
			heap.Push(h, kwHit{o, s})
		} else {
			h.hits[0] = kwHit{o, s}
			heap.Fix(h, 0)
		}
	}
	out := h.hits
	slices.SortFunc(out, func(a, b kwHit) int {
		if h.better(a, b) {
			return -1
		}
		return 1
	})
	return out
}

// hitHeap is a min-heap of hits: its root is the worst kept hit.
type hitHeap struct {
	x    *keywordIndex
	hits []kwHit
}

// better orders hits by score, then by ID, so rankings do not depend on
// insertion order.
func (h *hitHeap) better(a, b kwHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return h.x.docs[a.ord].id < h.x.docs[b.ord].id
}

func (h *hitHeap) Len() int           { return len(h.hits) }
func (h *hitHeap) Less(i, j int) bool { return h.better(h.hits[j], h.hits[i]) }
func (h *hitHeap) Swap(i, j int)      { h.hits[i], h.hits[j] = h.hits[j], h.hits[i] }
func (h *hitHeap) Push(v any)         { h.hits = append(h.hits, v.(kwHit)) }
func (h *hitHeap) Pop() any {
	v := h.hits[len(h.hits)-1]
	h.hits = h.hits[:len(h.hits)-1]
	return v
}
