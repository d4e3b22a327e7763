package recall

import (
	"context"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// TestStatelessPassesTheSuite runs the recall tests again on stateless
// engines: one hybrid search and reads of the store must answer as the
// cached engine does. Left out are the tests of what only the cache has:
// its catch-up, staleness and loads.
func TestStatelessPassesTheSuite(t *testing.T) {
	tests := map[string]func(*testing.T){
		"Filters":                    TestFilters,
		"FiltersApplyToBothSources":  TestFiltersApplyToBothSources,
		"TenantIsolation":            TestTenantIsolation,
		"QueryValidation":            TestQueryValidation,
		"QueryUnderstanding":         TestQueryUnderstanding,
		"TimeBoost":                  TestTimeBoost,
		"Hints":                      TestHints,
		"WithEvents":                 TestWithEvents,
		"RerankWeights":              TestRerankWeights,
		"RelevanceDominates":         TestRelevanceDominates,
		"UsageRecordedInBackground":  TestUsageRecordedInBackground,
		"SimilarFindsSharedWords":    TestSimilarFindsSharedWordsWithinTheFilter,
		"ConcurrentRecallsAndWrites": TestConcurrentRecallsAndWrites,
	}
	stateless = true
	defer func() { stateless = false }()
	for name, f := range tests {
		t.Run(name, f)
	}
}

// TestStatelessKeepsNoTenant: a stateless engine answers from the index
// and the store alone; it loads no tenant's memories.
func TestStatelessKeepsNoTenant(t *testing.T) {
	stateless = true
	defer func() { stateless = false }()
	e := newEnv(t, Config{})
	e.write(t, mem("t1", "m1", "Parse CSV files with Chinese headers using the GBK encoding", 0),
		mem("t1", "m2", "Deploys go out on Tuesdays after the CI run", 0))
	r := e.recall(t, memory.Query{Tenant: "t1", Text: "CSV headers encoding"})
	if got := ids(r); len(got) == 0 || got[0] != "m1" {
		t.Fatalf("recall = %v, want m1 first", got)
	}
	e.engine.mu.Lock()
	n := len(e.engine.tenants)
	e.engine.mu.Unlock()
	if n != 0 {
		t.Errorf("the engine holds %d tenant caches, want none", n)
	}
}

// TestStatelessServesTheStoresVersion: the index may lag the store; what
// is returned is the store's current version, and a memory the store no
// longer holds as recallable is not returned.
func TestStatelessServesTheStoresVersion(t *testing.T) {
	stateless = true
	defer func() { stateless = false }()
	e := newEnv(t, Config{})
	a := mem("t1", "a", "The staging database password rotates every Monday", 0)
	b := mem("t1", "b", "The staging database lives in eu-west-1", 0)
	e.write(t, a, b)
	// Behind the index's back: a is forgotten, b corrected.
	a2, b2 := a, b
	a2.Version, a2.Status = 2, memory.StatusForgotten
	b2.Version, b2.Content = 2, "The staging database lives in eu-central-1"
	if err := e.store.PutMemories(context.Background(), []memory.Memory{a2, b2}); err != nil {
		t.Fatal(err)
	}
	r := e.recall(t, memory.Query{Tenant: "t1", Text: "staging database"})
	if got := ids(r); len(got) != 1 || got[0] != "b" {
		t.Fatalf("recall = %v, want only b", got)
	}
	if c := r.Results[0].Memory.Content; c != b2.Content || r.Results[0].Memory.Version != 2 {
		t.Errorf("served %q (version %d), want the store's version 2 %q", c, r.Results[0].Memory.Version, b2.Content)
	}
}

// countingTerms counts the term statistics reads and the terms asked.
type countingTerms struct {
	store memory.TermStats
	reads int
	asked []string
}

func (c *countingTerms) TermStats(ctx context.Context, tenant string, terms []string) (memory.TermCounts, error) {
	c.reads++
	c.asked = append(c.asked, terms...)
	return c.store.TermStats(ctx, tenant, terms)
}

func (c *countingTerms) PutTermRows(ctx context.Context, rows []memory.TermRow) error {
	return c.store.PutTermRows(ctx, rows)
}

// TestStatsCacheReusesWithinTTL: term statistics are read once per term
// within the TTL, asked again only for terms not yet known, and afresh
// after forget (Refresh) or with getFresh.
func TestStatsCacheReusesWithinTTL(t *testing.T) {
	ctx := context.Background()
	store := memory.NewMemStore()
	if err := store.PutTermRows(ctx, []memory.TermRow{
		{Tenant: "t1", MemoryID: "m1", Version: 1, Live: true, Length: 2},
		{Tenant: "t1", Term: "csv", MemoryID: "m1", Version: 1, Live: true},
	}); err != nil {
		t.Fatal(err)
	}
	ct := &countingTerms{store: store}
	s := newStatsCache(ct, time.Hour)
	get := func(terms ...string) memory.TermCounts {
		t.Helper()
		c, err := s.get(ctx, "t1", terms)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := get("csv", "gbk"); c.Docs != 1 || c.Terms["csv"].Docs != 1 || ct.reads != 1 {
		t.Fatalf("first get = %+v after %d reads, want one read counting csv", c, ct.reads)
	}
	if c := get("gbk", "csv"); c.Terms["csv"].Docs != 1 || ct.reads != 1 {
		t.Fatalf("known terms were read again (%d reads)", ct.reads)
	}
	get("csv", "utf")
	if ct.reads != 2 || ct.asked[len(ct.asked)-1] != "utf" || len(ct.asked) != 3 {
		t.Fatalf("asked %v in %d reads, want only the new term utf the second time", ct.asked, ct.reads)
	}
	s.forget("t1")
	get("csv")
	if ct.reads != 3 || s.entries != 1 {
		t.Fatalf("after forget: %d reads, %d entries; want a fresh read holding one term", ct.reads, s.entries)
	}
	if _, err := s.getFresh(ctx, "t1", []string{"csv"}, 0); err != nil || ct.reads != 4 {
		t.Fatalf("getFresh(0) made %d reads (%v), want a read", ct.reads, err)
	}
}
