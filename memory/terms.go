package memory

import (
	"context"
	"slices"
	"strings"
)

// Term statistics are what keyword search inside a vector index needs
// from the system of record: how many of a tenant's recallable memories
// contain each term (for a query's IDF weights) and their average length
// in terms (for document weights). See package bm25.
//
// They are kept as rows: the memory row (Term "") of each memory version
// says whether that version is recallable and how many terms it has, and
// one row per distinct term it contains. A term counts for a memory only
// while the memory row's version equals the term row's: a version that
// drops a term needs no row for it, a retried write rewrites the same
// rows, and the highest version of each (tenant, term, memory) row wins,
// so the counts cannot drift. Terms "entity:…" and "task:…" count the
// memories carrying an entity or a task type, Value holding its canonical
// form, for query hints.

// TermRow is one row of a tenant's term statistics.
type TermRow struct {
	Tenant   string
	Term     string // "" for the memory row
	MemoryID string
	Version  int
	// Live, on a memory row, says the version is recallable (live, cold
	// or superseded). Term rows are always written live.
	Live   bool
	Length int    // the memory row's length in terms
	Value  string // an entity or task-type term's canonical form
}

// TermStat is one term's statistics.
type TermStat struct {
	Docs  int64  // recallable memories whose current version contains it
	Value string // the canonical form of an entity or task-type term
}

// TermCounts are a tenant's term statistics for some terms.
type TermCounts struct {
	Docs   int64 // recallable memories
	Length int64 // their total length in terms
	Terms  map[string]TermStat
}

// AvgLength is the average length of a recallable memory in terms (0 when
// there is none).
func (c TermCounts) AvgLength() float64 {
	if c.Docs == 0 {
		return 0
	}
	return float64(c.Length) / float64(c.Docs)
}

// TermStats is the store of term statistics.
type TermStats interface {
	// PutTermRows writes rows; rewriting a row is a no-op. Rows need a
	// tenant, a memory ID and a version ≥ 1.
	PutTermRows(ctx context.Context, rows []TermRow) error
	// TermStats returns the tenant's document count and length, and the
	// statistics of each of terms that any recallable memory contains.
	TermStats(ctx context.Context, tenant string, terms []string) (TermCounts, error)
}

// ValidateTermRows checks rows before they are written.
func ValidateTermRows(op string, rows []TermRow) error {
	for _, r := range rows {
		if err := ValidateTenant(op, r.Tenant); err != nil {
			return err
		}
		if r.MemoryID == "" {
			return Invalidf(op, "term row %q needs a memory id", r.Term)
		}
		if r.Version < 1 {
			return Invalidf(op, "term row %q of memory %s has version %d; versions start at 1", r.Term, r.MemoryID, r.Version)
		}
	}
	return nil
}

var _ TermStats = (*MemStore)(nil)

type termKey struct{ tenant, term, id string }

// PutTermRows implements TermStats.
func (s *MemStore) PutTermRows(ctx context.Context, rows []TermRow) error {
	if err := ValidateTermRows("memstore: put term rows", rows); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terms == nil {
		s.terms = map[termKey]TermRow{}
	}
	for _, r := range rows {
		k := termKey{r.Tenant, r.Term, r.MemoryID}
		if cur, ok := s.terms[k]; !ok || r.Version >= cur.Version {
			s.terms[k] = r
		}
	}
	return nil
}

// TermStats implements TermStats.
func (s *MemStore) TermStats(ctx context.Context, tenant string, terms []string) (TermCounts, error) {
	if err := ValidateTenant("memstore: term stats", tenant); err != nil {
		return TermCounts{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := TermCounts{Terms: map[string]TermStat{}}
	live := map[string]int{} // memory → its recallable version
	for k, r := range s.terms {
		if k.tenant == tenant && k.term == "" && r.Live {
			live[k.id] = r.Version
			c.Docs++
			c.Length += int64(r.Length)
		}
	}
	for _, t := range terms {
		if t == "" {
			continue
		}
		if _, done := c.Terms[t]; done {
			continue
		}
		var st TermStat
		for id, v := range live {
			if r, ok := s.terms[termKey{tenant, t, id}]; ok && r.Version == v {
				st.Docs++
				st.Value = r.Value
			}
		}
		if st.Docs > 0 {
			c.Terms[t] = st
		}
	}
	return c, nil
}

// purgeTerms drops the term rows of memories (all of a tenant's with
// all). Callers hold s.mu.
func (s *MemStore) purgeTerms(tenant string, ids []string, all bool) {
	for k := range s.terms {
		if k.tenant == tenant && (all || slices.Contains(ids, k.id)) {
			delete(s.terms, k)
		}
	}
}

// Hint term prefixes (see TermRow).
const (
	TermEntityPrefix = "entity:"
	TermTaskPrefix   = "task:"
)

// IsHintTerm reports whether a term counts entities or task types.
func IsHintTerm(t string) bool {
	return strings.HasPrefix(t, TermEntityPrefix) || strings.HasPrefix(t, TermTaskPrefix)
}
