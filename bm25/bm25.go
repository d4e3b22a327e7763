package bm25

import (
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// BM25 parameters, the in-process index's (Robertson and Zaragoza's usual
// values).
const (
	K1 = 1.2
	B  = 0.75
)

// Tokenizer names the tokenizer and the weighting of the sparse vectors.
const Tokenizer = "bm25-lang-terms-1"

// TermID is a term's sparse index: its FNV-1a hash, at most
// memory.MaxSparseIndex (the one hash above shares the index below).
func TermID(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return min(h.Sum32(), memory.MaxSparseIndex)
}

// Terms are a memory's keyword terms, with repeats.
func Terms(m memory.Memory) []string { return lang.DocTerms(memory.IndexText(m)) }

// Document is the sparse vector of a document with terms (with repeats),
// weighted against a tenant whose memories average avgLen terms (the
// document's own length when avgLen is 0).
func Document(terms []string, avgLen float64) memory.SparseVector {
	if len(terms) == 0 {
		return memory.SparseVector{}
	}
	if avgLen <= 0 {
		avgLen = float64(len(terms))
	}
	tf := map[string]int{}
	for _, t := range terms {
		tf[t]++
	}
	norm := K1 * (1 - B + B*float64(len(terms))/avgLen)
	w := make(map[uint32]float32, len(tf))
	for t, n := range tf {
		f := float64(n)
		w[TermID(t)] += float32(f * (K1 + 1) / (f + norm))
	}
	return memory.NewSparseVector(w)
}

// IDF is the inverse document frequency of a term that df of docs
// documents contain.
func IDF(df, docs int64) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// Query is the sparse vector of query terms: each distinct term that some
// document contains, weighted by its IDF in c. Terms no document contains
// are left out, as they cannot score.
func Query(terms []string, c memory.TermCounts) memory.SparseVector {
	w := map[uint32]float32{}
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		st, ok := c.Terms[t]
		if !ok || st.Docs == 0 {
			continue
		}
		w[TermID(t)] += float32(IDF(st.Docs, c.Docs))
	}
	return memory.NewSparseVector(w)
}

// Rows are the term statistics rows of a memory version (see
// memory.TermRow): the memory row, live when the version is recallable,
// one row per distinct term, and a row per entity and task type under
// their hint keys.
func Rows(m memory.Memory, terms []string) []memory.TermRow {
	live := slices.Contains(Recallable, m.Status)
	rows := []memory.TermRow{{Tenant: m.Tenant, MemoryID: m.ID, Version: m.Version, Live: live, Length: len(terms)}}
	if !live {
		// The memory row alone takes every term of the memory out of the
		// counts.
		return rows
	}
	seen := map[string]bool{"": true}
	add := func(term, value string) {
		if seen[term] {
			return
		}
		seen[term] = true
		rows = append(rows, memory.TermRow{Tenant: m.Tenant, Term: term, MemoryID: m.ID, Version: m.Version, Live: true, Value: value})
	}
	for _, t := range terms {
		add(t, "")
	}
	for _, e := range memory.NormalizeEntities(m.Entities) {
		add(EntityKey(e), e)
	}
	if m.TaskType != "" {
		add(TaskKey(m.TaskType), m.TaskType)
	}
	return rows
}

// Recallable are the statuses recall can return, the memories that term
// statistics count.
var Recallable = []memory.Status{memory.StatusLive, memory.StatusCold, memory.StatusSuperseded}

// PhraseKey is the form hint phrases are matched in: folded words joined by
// single spaces, so "UTF-8", "utf 8" and "Utf_8" agree.
func PhraseKey(s string) string { return strings.Join(lang.Words(s), " ") }

// EntityKey and TaskKey are the term statistics keys of an entity and a
// task type.
func EntityKey(entity string) string { return memory.TermEntityPrefix + PhraseKey(entity) }

// TaskKey: see EntityKey.
func TaskKey(taskType string) string { return memory.TermTaskPrefix + PhraseKey(taskType) }
