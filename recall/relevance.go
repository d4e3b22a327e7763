package recall

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/hindsight-memory/hindsight/lang"
)

// Relevance is absolute: how much of what a query asks about a memory
// speaks to, whatever else is stored. It is the weighted share of the
// query's terms (lang.Terms: English stems, Chinese characters and
// bigrams) that the memory contains, directly or through a translation or
// synonym of the query's words (see Expander), with partial credit for an
// English word that shares a long stem with one of the memory's. Terms
// that discriminate weigh more: a Chinese character alone weighs less
// than a bigram, and in a tenant with many memories a term most of them
// contain weighs less than a rare one (an IDF with a prior of
// relevancePriorDocs empty documents, so that in a small store every term
// counts about the same). With a neural embedder, the cosine similarity,
// rescaled, can also make a memory relevant; a lexical embedder's cosine
// only ranks.
//
// A memory below Config.MinRelevance is not returned: recency, confidence
// and usage reorder relevant memories and never make an irrelevant one
// relevant, and a query nothing stored speaks to gets no results.

// DefaultMinRelevance is the relevance a memory needs to be recalled,
// chosen on the scenario corpus's "nothing relevant" probes and LoCoMo.
const DefaultMinRelevance = 0.2

// relevancePriorDocs is the number of empty documents the IDF of
// relevance assumes besides the tenant's own.
const relevancePriorDocs = 20

// Weights of query terms by what they are.
const (
	weightWord      = 1.0  // an English stem, a number, a name
	weightCJKBigram = 1.0  // two Chinese characters
	weightCJKChar   = 0.35 // one Chinese character: many words share it
	partialCredit   = 0.6  // an English word sharing a long stem
	minSharedPrefix = 5
)

// relTerm is one distinct query term with its weight and the other terms
// that count as a match (translations, synonyms).
type relTerm struct {
	term   string
	weight float64
	alts   []string
	latin  bool
}

// relevanceTerms weighs the distinct terms of a query.
func relevanceTerms(terms []string, expand func(string) []string) []relTerm {
	seen := map[string]bool{}
	var out []relTerm
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		rt := relTerm{term: t, weight: weightWord, latin: !lang.HasCJK(t)}
		if !rt.latin {
			if utf8.RuneCountInString(t) == 1 {
				rt.weight = weightCJKChar
			} else {
				rt.weight = weightCJKBigram
			}
		}
		if expand != nil {
			rt.alts = expand(t)
		}
		out = append(out, rt)
	}
	return out
}

// coverage is the relevance of the document at ord to the query terms.
// Callers hold the tenant cache's lock.
func (x *keywordIndex) coverage(q []relTerm, ord int32) float64 {
	if int(ord) >= len(x.docs) || !x.docs[ord].live || len(q) == 0 {
		return 0
	}
	d := x.docs[ord]
	has := make(map[string]bool, len(d.terms))
	for _, t := range d.terms {
		has[t] = true
	}
	n := float64(x.live + relevancePriorDocs)
	maxIDF := math.Log(1 + (n+0.5)/0.5)
	total, matched := 0.0, 0.0
	for _, t := range q {
		df := float64(len(x.postings[t.term]))
		idf := math.Log(1+(n-df+0.5)/(df+0.5)) / maxIDF
		w := t.weight * (0.5 + 0.5*idf)
		total += w
		switch {
		case has[t.term]:
			matched += w
		case anyIn(t.alts, has):
			matched += w
		case t.latin && len(t.term) >= minSharedPrefix && sharesStem(t.term, d.terms):
			matched += partialCredit * w
		}
	}
	if total == 0 {
		return 0
	}
	return matched / total
}

func anyIn(ts []string, has map[string]bool) bool {
	for _, t := range ts {
		if has[t] {
			return true
		}
	}
	return false
}

// sharesStem reports whether one of terms starts with the same
// minSharedPrefix letters as t ("deploy" and "deployment").
func sharesStem(t string, terms []string) bool {
	p := t[:minSharedPrefix]
	for _, u := range terms {
		if len(u) >= minSharedPrefix && strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// vectorRelevance rescales a neural embedder's cosine similarity to the
// relevance scale: 0.3 and below is nothing in common, 0.8 and above is
// the same thing.
func vectorRelevance(cos float64) float64 {
	return clamp01((cos - 0.3) / 0.5)
}
