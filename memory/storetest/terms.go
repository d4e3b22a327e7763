package storetest

import (
	"context"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

// termRows are the rows the indexer writes for one memory version.
func termRows(tenant, id string, version int, live bool, terms ...string) []memory.TermRow {
	rows := []memory.TermRow{{Tenant: tenant, MemoryID: id, Version: version, Live: live, Length: len(terms)}}
	for _, t := range terms {
		rows = append(rows, memory.TermRow{Tenant: tenant, Term: t, MemoryID: id, Version: version, Live: true})
	}
	return rows
}

func testTermStats(t *testing.T, s memory.EpisodicStore) {
	ts, ok := s.(memory.TermStats)
	if !ok {
		t.Skip("the store keeps no term statistics")
	}
	ctx := context.Background()
	a, b := Tenant(t), Tenant(t)
	put := func(rows []memory.TermRow) {
		t.Helper()
		must(t, ts.PutTermRows(ctx, rows))
	}
	put(termRows(a, "m1", 1, true, "csv", "header", "utf"))
	put(termRows(a, "m2", 1, true, "csv", "excel"))
	put(append(termRows(a, "m3", 1, true, "csv"), memory.TermRow{Tenant: a, Term: memory.TermEntityPrefix + "excel", MemoryID: "m3", Version: 1, Live: true, Value: "Excel"}))
	put(termRows(b, "m1", 1, true, "header"))
	// m1's second version drops "utf"; m2 is forgotten from recall.
	put(termRows(a, "m1", 2, true, "csv", "header"))
	put(termRows(a, "m2", 2, false, "csv", "excel"))
	// A retried write of an old version changes nothing.
	put(termRows(a, "m1", 1, true, "csv", "header", "utf"))

	c, err := ts.TermStats(ctx, a, []string{"csv", "header", "utf", "excel", "missing", memory.TermEntityPrefix + "excel", "csv"})
	must(t, err)
	if c.Docs != 2 || c.Length != 3 {
		t.Errorf("tenant a has %d recallable memories of total length %d, want 2 and 3 (m1 v2 and m3)", c.Docs, c.Length)
	}
	want := map[string]int64{"csv": 2, "header": 1, memory.TermEntityPrefix + "excel": 1}
	for term, n := range want {
		if got := c.Terms[term].Docs; got != n {
			t.Errorf("df(%q) = %d, want %d", term, got, n)
		}
	}
	for _, gone := range []string{"utf", "excel", "missing"} {
		if st, ok := c.Terms[gone]; ok {
			t.Errorf("df(%q) = %d, want absent: no current recallable version contains it", gone, st.Docs)
		}
	}
	if v := c.Terms[memory.TermEntityPrefix+"excel"].Value; v != "Excel" {
		t.Errorf("entity term value %q, want %q", v, "Excel")
	}
	if avg := c.AvgLength(); avg != 1.5 {
		t.Errorf("average length %v, want 1.5", avg)
	}

	cb, err := ts.TermStats(ctx, b, []string{"csv", "header"})
	must(t, err)
	if cb.Docs != 1 || cb.Terms["header"].Docs != 1 || cb.Terms["csv"].Docs != 0 {
		t.Errorf("tenant b sees %+v, want only its own memory", cb)
	}

	if _, err := s.Purge(ctx, memory.PurgeRequest{Tenant: a, MemoryIDs: []string{"m1"}}); err != nil {
		t.Fatal(err)
	}
	c, err = ts.TermStats(ctx, a, []string{"csv", "header"})
	must(t, err)
	if c.Docs != 1 || c.Terms["csv"].Docs != 1 || c.Terms["header"].Docs != 0 {
		t.Errorf("after purging m1: %+v, want only m3 counted", c)
	}
	if err := ts.PutTermRows(ctx, []memory.TermRow{{Tenant: a, Term: "x", Version: 1}}); !memory.IsInvalid(err) {
		t.Errorf("a row without memory id: %v, want EINVALID", err)
	}
}
