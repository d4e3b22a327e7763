package recall

import (
	"context"
	"sync"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// statsCache keeps term statistics a stateless engine read, per tenant
// and term, for ttl: a tenant's recalls within ttl reuse them, and a
// query costs a statistics read only for terms no recent query asked
// about. It holds counts, never memories, and at most maxStatEntries
// terms (all are dropped when it is full).
type statsCache struct {
	store memory.TermStats
	ttl   time.Duration

	mu     sync.Mutex
	totals map[string]statTotals
	terms  map[statKey]statEntry
}

const maxStatEntries = 200_000

type statKey struct{ tenant, term string }

type statTotals struct {
	docs, length int64
	read         time.Time
}

type statEntry struct {
	st   memory.TermStat // Docs 0: no recallable memory contains the term
	read time.Time
}

func newStatsCache(store memory.TermStats, ttl time.Duration) *statsCache {
	return &statsCache{store: store, ttl: ttl, totals: map[string]statTotals{}, terms: map[statKey]statEntry{}}
}

// get returns the tenant's counts for terms, reading those not known for
// less than ttl (and the totals with them).
func (s *statsCache) get(ctx context.Context, tenant string, terms []string) (memory.TermCounts, error) {
	return s.getFresh(ctx, tenant, terms, s.ttl)
}

// getFresh is get with counts at most maxAge old (0: read them all).
func (s *statsCache) getFresh(ctx context.Context, tenant string, terms []string, maxAge time.Duration) (memory.TermCounts, error) {
	now := time.Now()
	out := memory.TermCounts{Terms: make(map[string]memory.TermStat, len(terms))}
	var missing []string
	s.mu.Lock()
	t, ok := s.totals[tenant]
	fresh := ok && now.Sub(t.read) < maxAge
	for _, term := range terms {
		if e, ok := s.terms[statKey{tenant, term}]; ok && now.Sub(e.read) < maxAge {
			if e.st.Docs > 0 {
				out.Terms[term] = e.st
			}
			continue
		}
		missing = append(missing, term)
	}
	s.mu.Unlock()
	if fresh && len(missing) == 0 {
		out.Docs, out.Length = t.docs, t.length
		return out, nil
	}
	c, err := s.store.TermStats(ctx, tenant, missing)
	if err != nil {
		return memory.TermCounts{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.terms)+len(missing) > maxStatEntries {
		clear(s.terms)
		clear(s.totals)
	}
	s.totals[tenant] = statTotals{docs: c.Docs, length: c.Length, read: now}
	for _, term := range missing {
		st := c.Terms[term]
		s.terms[statKey{tenant, term}] = statEntry{st: st, read: now}
		if st.Docs > 0 {
			out.Terms[term] = st
		}
	}
	out.Docs, out.Length = c.Docs, c.Length
	return out, nil
}

// forget drops what is known of a tenant, so that its next recall reads
// the statistics afresh.
func (s *statsCache) forget(tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.totals, tenant)
	for k := range s.terms {
		if k.tenant == tenant {
			delete(s.terms, k)
		}
	}
}
