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

	mu      sync.Mutex
	tenants map[string]*tenantStats
	entries int // terms held, of every tenant
}

const maxStatEntries = 200_000

// tenantStats is what is known of one tenant.
type tenantStats struct {
	docs, length int64
	read         time.Time // of the totals
	terms        map[string]statEntry
}

type statEntry struct {
	st   memory.TermStat // Docs 0: no recallable memory contains the term
	read time.Time
}

func newStatsCache(store memory.TermStats, ttl time.Duration) *statsCache {
	return &statsCache{store: store, ttl: ttl, tenants: map[string]*tenantStats{}}
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
	t := s.tenants[tenant]
	fresh := t != nil && now.Sub(t.read) < maxAge
	for _, term := range terms {
		if t != nil {
			if e, ok := t.terms[term]; ok && now.Sub(e.read) < maxAge {
				if e.st.Docs > 0 {
					out.Terms[term] = e.st
				}
				continue
			}
		}
		missing = append(missing, term)
	}
	if fresh && len(missing) == 0 {
		out.Docs, out.Length = t.docs, t.length
		s.mu.Unlock()
		return out, nil
	}
	s.mu.Unlock()
	c, err := s.store.TermStats(ctx, tenant, missing)
	if err != nil {
		return memory.TermCounts{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries+len(missing) > maxStatEntries {
		clear(s.tenants)
		s.entries = 0
	}
	t = s.tenants[tenant]
	if t == nil {
		t = &tenantStats{terms: map[string]statEntry{}}
		s.tenants[tenant] = t
	}
	t.docs, t.length, t.read = c.Docs, c.Length, now
	for _, term := range missing {
		st := c.Terms[term]
		if _, known := t.terms[term]; !known {
			s.entries++
		}
		t.terms[term] = statEntry{st: st, read: now}
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
	if t := s.tenants[tenant]; t != nil {
		s.entries -= len(t.terms)
		delete(s.tenants, tenant)
	}
}
