package recall

import (
	"math"
	"strings"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
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
	// minSpecificity is the share of its weight the most common term
	// keeps.
	minSpecificity = 0.1
)

// relTerm is one distinct unit of meaning of a query, with its weight and
// the ways it may be written in a memory: each form is a group of index
// terms that must all occur (a Chinese word is its bigrams; a two-word
// gloss its two stems). The first form is the term as the query writes
// it; the others are translations and synonyms.
type relTerm struct {
	forms  [][]string
	weight float64
	latin  string // for an English stem: the stem, for partial credit
}

// relevanceTerms reads the units of meaning of a query: English stems
// (stop words dropped, as Terms does), and Chinese words, segmented with
// the lexicon when there is one (else each bigram of a run), so that
// bigrams straddling two words do not count as things the query asks
// about. Each unit weighs by what it is and by its specificity
// (lang.Specificity), and carries its translations and synonyms (x).
func relevanceTerms(text string, lx *lexicon.Lexicon, x expansion) []relTerm {
	seen := map[string]bool{}
	var out []relTerm
	add := func(key string, form []string, weight float64, latin string, spec float64) {
		if seen[key] || len(form) == 0 {
			return
		}
		seen[key] = true
		rt := relTerm{forms: [][]string{form}, weight: weight * (minSpecificity + (1-minSpecificity)*spec), latin: latin}
		rt.forms = append(rt.forms, x[form[0]]...)
		out = append(out, rt)
	}
	// A name the query writes joined ("readinessProbe") may be written
	// apart in a memory: its parts, all of them, are another form.
	parts := map[string][]string{}
	for _, id := range lang.Identifiers(text) {
		parts[id.Whole] = id.Parts
	}
	for _, r := range lang.Runs(text) {
		if !r.CJK {
			if lang.IsStopWord(r.Text) {
				continue
			}
			st := lang.Stem(r.Text)
			add(st, []string{st}, weightWord, st, lang.Specificity(st))
			if ps, ok := parts[st]; ok && len(out) > 0 && out[len(out)-1].forms[0][0] == st {
				out[len(out)-1].forms = append(out[len(out)-1].forms, ps)
			}
			continue
		}
		var words []string
		if lx != nil {
			words = lx.Segment(r.Text)
		} else {
			words = runBigrams(r.Text)
		}
		for _, w := range words {
			rs := []rune(w)
			if len(rs) == 1 {
				if lang.IsCJKStopChar(rs[0]) {
					continue
				}
				add(w, []string{w}, weightCJKChar, "", lang.Specificity(w))
				continue
			}
			bs := bigrams(w)
			spec := 0.0
			for _, b := range bs {
				spec += lang.Specificity(b)
			}
			add(w, bs, weightCJKBigram, "", spec/float64(len(bs)))
		}
	}
	return out
}

// runBigrams is a CJK run as overlapping bigrams (a single character
// alone), for when there is no lexicon to segment it.
func runBigrams(run string) []string {
	rs := []rune(run)
	if len(rs) < 2 {
		return []string{run}
	}
	var out []string
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	return out
}

// coverage is the relevance of the document at ord to the query terms.
// Callers hold the tenant cache's lock.
func (x *keywordIndex) coverage(q []relTerm, ord int32) float64 {
	if int(ord) >= len(x.docs) || !x.docs[ord].live || len(q) == 0 {
		return 0
	}
	return coverageOf(q, x.docs[ord].terms, int64(x.live), func(t string) int64 { return int64(x.docFreq(t)) })
}

// coverageOf is the relevance to the query terms q of a document with
// distinct terms, in a tenant of docs memories of which df(t) contain t.
func coverageOf(q []relTerm, terms []string, docs int64, df func(string) int64) float64 {
	if len(q) == 0 {
		return 0
	}
	has := make(map[string]bool, len(terms))
	for _, t := range terms {
		has[t] = true
	}
	n := float64(docs + relevancePriorDocs)
	maxIDF := math.Log(1 + (n+0.5)/0.5)
	total, matched := 0.0, 0.0
	for _, t := range q {
		w := t.weight
		if len(t.forms) > 0 && len(t.forms[0]) == 1 {
			// Within a large tenant, a term most memories contain says
			// less about which one is meant.
			df := float64(df(t.forms[0][0]))
			w *= 0.5 + 0.5*math.Log(1+(n-df+0.5)/(df+0.5))/maxIDF
		}
		total += w
		switch {
		case anyIn(t.forms, has):
			matched += w
		case t.latin != "" && len(t.latin) >= minSharedPrefix && sharesStem(t.latin, terms):
			matched += partialCredit * w
		case partlyIn(t.forms[1:], has, terms):
			matched += partialCredit * w
		}
	}
	if total == 0 {
		return 0
	}
	return matched / total
}

// anyIn reports whether every term of one of the groups is in has.
func anyIn(groups [][]string, has map[string]bool) bool {
	for _, g := range groups {
		all := len(g) > 0
		for _, t := range g {
			if !has[t] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// partlyIn reports whether an alternative shows in part: one of its
// terms occurs, or an English one of four letters or more begins one of
// the document's terms (a gloss "report form" in "report", "time" in
// "timestamp"). A translation found in part is evidence, not a match.
func partlyIn(forms [][]string, has map[string]bool, terms []string) bool {
	for _, f := range forms {
		for _, a := range f {
			if has[a] {
				return true
			}
			if len(a) < 4 || lang.HasCJK(a) {
				continue
			}
			for _, u := range terms {
				if strings.HasPrefix(u, a) {
					return true
				}
			}
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
