package bm25

import (
	"math"
	"testing"

	"github.com/hindsight-memory/hindsight/lang"
	"github.com/hindsight-memory/hindsight/memory"
)

// TestDotIsBM25: a query vector's inner product with a document vector is
// the document's Okapi BM25 score for the query, computed here from the
// formula term by term.
func TestDotIsBM25(t *testing.T) {
	docs := []string{
		"Parse CSV files with Chinese headers using GBK encoding",
		"CSV exports go to the shared drive every Friday",
		"报表的表头用中文，CSV 文件用 GBK 编码",
		"Deploys run after the CI pipeline passes",
	}
	terms := make([][]string, len(docs))
	total := 0
	df := map[string]int64{}
	for i, d := range docs {
		terms[i] = lang.Terms(d)
		total += len(terms[i])
		seen := map[string]bool{}
		for _, t := range terms[i] {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(len(docs))
	counts := memory.TermCounts{Docs: int64(len(docs)), Length: int64(total), Terms: map[string]memory.TermStat{}}
	for t, n := range df {
		counts.Terms[t] = memory.TermStat{Docs: n}
	}
	query := lang.Terms("CSV headers GBK encoding csv")
	q := Query(query, counts)
	for i := range docs {
		want := 0.0
		seen := map[string]bool{}
		for _, qt := range query {
			if seen[qt] {
				continue
			}
			seen[qt] = true
			tf := 0.0
			for _, t := range terms[i] {
				if t == qt {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			n := float64(len(docs))
			idf := math.Log(1 + (n-float64(df[qt])+0.5)/(float64(df[qt])+0.5))
			want += idf * tf * (K1 + 1) / (tf + K1*(1-B+B*float64(len(terms[i]))/avg))
		}
		got := q.Dot(Document(terms[i], avg))
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("doc %d: dot %v, BM25 %v", i, got, want)
		}
	}
	if d := Document(terms[3], avg); q.Dot(d) != 0 {
		t.Errorf("a document sharing no term scores %v, want 0", q.Dot(d))
	}
}

// TestRows: a recallable version counts its terms, entities and task
// type; any other status writes only the memory row, which takes the
// memory out of every count.
func TestRows(t *testing.T) {
	m := memory.Memory{Tenant: "t", ID: "m", Version: 3, Status: memory.StatusLive, Content: "Use UTF-8 for CSV",
		Entities: []string{"CSV"}, TaskType: "data export"}
	terms := Terms(m)
	rows := Rows(m, terms)
	has := map[string]memory.TermRow{}
	for _, r := range rows {
		has[r.Term] = r
		if r.Version != 3 || r.MemoryID != "m" || r.Tenant != "t" {
			t.Errorf("row %+v does not name the version", r)
		}
	}
	if r := has[""]; !r.Live || r.Length != len(terms) {
		t.Errorf("memory row %+v, want live with length %d", r, len(terms))
	}
	for _, want := range []string{"csv", EntityKey("CSV"), TaskKey("data export")} {
		if _, ok := has[want]; !ok {
			t.Errorf("no row for %q among %v", want, rows)
		}
	}
	m.Status = memory.StatusArchived
	if rows := Rows(m, terms); len(rows) != 1 || rows[0].Live {
		t.Errorf("archived version writes %+v, want one memory row that is not live", rows)
	}
}
