package recall

import (
	"slices"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/lang/lexicon"
	"github.com/hindsight-memory/hindsight/runes"
)

// An expansion is what else a query term may be written as in a memory: a
// translation (报表 → report; encoding → 编码) or a synonym (refund →
// repay). Each alternative is a group of index terms that must all occur
// (a two-word gloss, the bigrams of a three-character word).
type expansion map[string][][]string

// maxAlternatives bounds the alternatives of one query term.
const maxAlternatives = 12

// expandQuery finds the alternatives of a query's terms with the lexicon
// (nil: none). Chinese runs are segmented into dictionary words; each word
// of two or more characters lends its English glosses to the bigram it
// starts with. English terms get the Chinese words whose gloss they are
// and their WordNet synonyms.
func expandQuery(lx *lexicon.Lexicon, text string) expansion {
	if lx == nil {
		return nil
	}
	out := expansion{}
	add := func(term string, alt []string) {
		if len(alt) == 0 || len(out[term]) >= maxAlternatives {
			return
		}
		for _, a := range out[term] {
			if equal(a, alt) {
				return
			}
		}
		out[term] = append(out[term], alt)
	}
	for _, run := range cjkRuns(lang.Fold(text)) {
		for _, w := range lx.Segment(run) {
			rs := []rune(w)
			if len(rs) < 2 {
				continue
			}
			key := string(rs[:2])
			for _, g := range lx.English(w) {
				add(key, g)
			}
		}
	}
	for _, t := range lang.Terms(text) {
		if lang.HasCJK(t) {
			continue
		}
		for _, w := range lx.Chinese(t) {
			add(t, bigrams(w))
		}
		for _, s := range lx.Synonyms(t) {
			add(t, []string{s})
		}
		for _, s := range lx.Related(t) {
			add(t, []string{s})
		}
	}
	return out
}

// crossTerms returns the terms of the alternatives written in the other
// script than their query term, once each, for the keyword search: a
// memory written in the other language becomes a candidate. Synonyms in
// the same language only count towards relevance: as search terms they
// would reorder what the query's own words already find.
func (x expansion) crossTerms() []string {
	var out []string
	seen := map[string]bool{}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, a := range x[k] {
			for _, t := range a {
				if lang.HasCJK(t) == lang.HasCJK(k) {
					continue
				}
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// bigrams are the index terms a Chinese word is found by: itself when it
// has two characters, else its overlapping bigrams.
func bigrams(w string) []string {
	rs := []rune(w)
	if len(rs) <= 2 {
		return []string{w}
	}
	var out []string
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	return out
}

// cjkRuns returns the runs of CJK characters of s.
func cjkRuns(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if runes.IsCJK(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}
