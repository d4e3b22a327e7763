package locomo

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/hindsight-memory/hindsight/lang"
)

// The reference baseline the README quotes (recall@10 = 0.626): BM25 over
// stop-worded, stemmed words fused with TF-IDF cosine over character
// trigrams by reciprocal-rank fusion (k = 60), over the turns' text, with
// no context, dates or speakers beyond the words. It bypasses the recall
// engine: it is what the engine is measured against, computed on the same
// data with the same scoring.

// baseline ranks one conversation's turns for a question.
type baseline struct {
	ids   []string // dia IDs
	bm25  *bm25Docs
	grams *tfidf
}

func newBaseline(conv Conversation) *baseline {
	b := &baseline{bm25: &bm25Docs{df: map[string]int{}}, grams: &tfidf{df: map[string]int{}}}
	for _, s := range conv.Sessions {
		for _, t := range s.Turns {
			text := turnText(t)
			b.ids = append(b.ids, t.DiaID)
			b.bm25.add(lang.Terms(text))
			b.grams.add(charGrams(text))
		}
	}
	b.grams.finish()
	return b
}

// rank returns the dia IDs of the best k turns for question.
func (b *baseline) rank(question string, k int) []string {
	const rrfK = 60
	fused := make([]float64, len(b.ids))
	for _, scores := range [][]float64{b.bm25.scores(lang.Terms(question)), b.grams.scores(charGrams(question))} {
		order := make([]int, 0, len(scores))
		for i, s := range scores {
			if s > 0 {
				order = append(order, i)
			}
		}
		slices.SortFunc(order, func(x, y int) int {
			if c := cmp.Compare(scores[y], scores[x]); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		for r, i := range order {
			fused[i] += 1 / float64(rrfK+r+1)
		}
	}
	order := make([]int, len(b.ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(fused[y], fused[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	out := make([]string, 0, k)
	for _, i := range order[:min(k, len(order))] {
		out = append(out, b.ids[i])
	}
	return out
}

func turnText(t Turn) string {
	s := t.Speaker + ": " + t.Text
	if t.Caption != "" {
		s += " [shared an image: " + t.Caption + "]"
	}
	return s
}

type bm25Docs struct {
	docs   []map[string]int
	lens   []int
	df     map[string]int
	totLen int
}

func (x *bm25Docs) add(terms []string) {
	tf := map[string]int{}
	for _, t := range terms {
		tf[t]++
	}
	for t := range tf {
		x.df[t]++
	}
	x.docs = append(x.docs, tf)
	x.lens = append(x.lens, len(terms))
	x.totLen += len(terms)
}

func (x *bm25Docs) scores(q []string) []float64 {
	const k1, b = 1.2, 0.75
	n := float64(len(x.docs))
	avg := float64(x.totLen) / n
	out := make([]float64, len(x.docs))
	seen := map[string]bool{}
	for _, t := range q {
		if seen[t] || x.df[t] == 0 {
			continue
		}
		seen[t] = true
		df := float64(x.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, d := range x.docs {
			if f := float64(d[t]); f > 0 {
				out[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(x.lens[i])/avg))
			}
		}
	}
	return out
}

// charGrams are the character trigrams of the folded text, words padded
// with spaces and punctuation dropped.
func charGrams(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(lang.Fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune(" " + w + " ")
		for i := 0; i+3 <= len(rs); i++ {
			out = append(out, string(rs[i:i+3]))
		}
	}
	return out
}

type tfidf struct {
	docs  []map[string]float64
	df    map[string]int
	norms []float64
}

func (x *tfidf) add(grams []string) {
	tf := map[string]float64{}
	for _, g := range grams {
		tf[g]++
	}
	for g := range tf {
		x.df[g]++
	}
	x.docs = append(x.docs, tf)
}

func (x *tfidf) idf(g string) float64 {
	return math.Log(float64(1+len(x.docs))/float64(1+x.df[g])) + 1
}

func (x *tfidf) finish() {
	x.norms = make([]float64, len(x.docs))
	for i, d := range x.docs {
		var n float64
		for g, f := range d {
			w := (1 + math.Log(f)) * x.idf(g)
			d[g] = w
			n += w * w
		}
		x.norms[i] = math.Sqrt(n)
	}
}

func (x *tfidf) scores(grams []string) []float64 {
	q := map[string]float64{}
	for _, g := range grams {
		q[g]++
	}
	var qn float64
	for g, f := range q {
		w := (1 + math.Log(f)) * x.idf(g)
		q[g] = w
		qn += w * w
	}
	qn = math.Sqrt(qn)
	out := make([]float64, len(x.docs))
	if qn == 0 {
		return out
	}
	for i, d := range x.docs {
		var dot float64
		for g, w := range q {
			dot += w * d[g]
		}
		if x.norms[i] > 0 {
			out[i] = dot / (qn * x.norms[i])
		}
	}
	return out
}
