package recall

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFuseRRF(t *testing.T) {
	// Vector: a, b, c. Keyword: c, a. k = 1 keeps the numbers readable.
	vec := ranked{ids: []string{"a", "b", "c"}, scores: []float64{.9, .8, .7}, weight: 1}
	kw := ranked{ids: []string{"c", "a"}, scores: []float64{5, 3}, weight: 1}
	got := fuseRRF([]ranked{vec, kw}, 1)
	best := 1.0/2 + 1.0/2 // first in both lists
	want := map[string]float64{
		"a": (1.0/2 + 1.0/3) / best, // 1st and 2nd
		"b": (1.0 / 3) / best,       // 2nd in one list
		"c": (1.0/4 + 1.0/2) / best, // 3rd and 1st
	}
	for id, w := range want {
		if !approx(got[id], w) {
			t.Errorf("rrf[%s] = %v, want %v", id, got[id], w)
		}
	}
	if len(got) != 3 {
		t.Fatalf("rrf returned %d documents, want 3", len(got))
	}
	// Weights: a list with weight 0 changes nothing.
	kw.weight = 0
	got = fuseRRF([]ranked{vec, kw}, 1)
	if !approx(got["a"], 1) || !approx(got["c"], 1.0/4/(1.0/2)) {
		t.Errorf("rrf with a zero-weight keyword list = %v", got)
	}
}

func TestFuseWeighted(t *testing.T) {
	vec := ranked{ids: []string{"a", "b"}, scores: []float64{0.8, 0.4}, weight: 0.5}
	kw := ranked{ids: []string{"c", "a"}, scores: []float64{10, 5}, weight: 0.5}
	got := fuseWeighted([]ranked{vec, kw})
	want := map[string]float64{
		"a": 0.5*1 + 0.5*0.5,   // best vector, half the best keyword
		"b": 0.5*0.5 + 0.5*0.5, // missing from keywords: that list's lowest
		"c": 0.5*0.5 + 0.5*1,   // missing from vectors: that list's lowest
	}
	for id, w := range want {
		if !approx(got[id], w) {
			t.Errorf("weighted[%s] = %v, want %v", id, got[id], w)
		}
	}
}

func TestRerankWeights(t *testing.T) {
	// Two memories equally relevant to the query; one is recent, the other
	// has high confidence and was recalled often.
	recent := mem("acme", "recent", "deploy the billing service on fridays", time.Hour)
	proven := mem("acme", "proven", "deploy the billing service on fridays", 200*24*time.Hour)
	proven.Confidence = 0.9
	q := memory.Query{Tenant: "acme", Text: "deploy billing service fridays"}

	e := newEnv(t, Config{NoUsage: true})
	e.write(t, recent, proven)
	r := e.recall(t, q)
	if got := ids(r); !slices.Equal(got, []string{"recent", "proven"}) {
		t.Fatalf("default weights rank %q, want recency (0.2) to beat confidence (0.15)", got)
	}
	for _, res := range r.Results {
		b := res.Breakdown
		w := DefaultWeights
		if final := b.Fused * (w.Relevance + w.Recency*b.Recency + w.Confidence*b.Confidence + w.Usage*b.Usage); !approx(final, b.Final) || !approx(res.Score, b.Final) {
			t.Errorf("%s: final %v, score %v, want the fused score %v scaled by the weighted sum of %+v", res.Memory.ID, b.Final, res.Score, final, b)
		}
	}
	if rec := r.Results[0].Breakdown.Recency; rec < 0.99 {
		t.Errorf("an hour-old memory has recency %v, want about 1", rec)
	}
	if rec := r.Results[1].Breakdown.Recency; !approx(rec, math.Exp2(-200.0/30)) {
		t.Errorf("a 200-day-old memory has recency %v, want 2^(-200/30)", rec)
	}

	e = newEnv(t, Config{NoUsage: true, Weights: Weights{Relevance: 0.6, Recency: 0, Confidence: 0.15}})
	e.write(t, recent, proven)
	if got := ids(e.recall(t, q)); !slices.Equal(got, []string{"proven", "recent"}) {
		t.Fatalf("without recency %q, want confidence to decide", got)
	}
}

func TestRelevanceDominates(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	e.write(t,
		mem("acme", "match", "parse csv files with chinese headers using gbk", 300*24*time.Hour),
		mem("acme", "fresh", "the coffee machine is on the second floor", time.Minute),
	)
	r := e.recall(t, memory.Query{Tenant: "acme", Text: "how to parse chinese csv headers"})
	if got := ids(r); len(got) == 0 || got[0] != "match" {
		t.Fatalf("got %q, want the relevant old memory first", got)
	}
	b := r.Results[0].Breakdown
	if b.Similarity <= 0 || b.Keyword != 1 || b.Fused <= 0 || b.Fused > 1 {
		t.Fatalf("breakdown %+v: want similarity > 0, keyword 1 (best), fused in (0,1]", b)
	}
}

func TestContextWindow(t *testing.T) {
	// A question asked in one turn and answered in the next: the answer
	// shares no word with the query; its neighbour does.
	turns := []memory.Memory{
		mem("acme", "t1", "Mel: what did you paint last weekend?", 0),
		mem("acme", "t2", "Caroline: a sunrise over the lake, in oils", 0),
		mem("acme", "t3", "Mel: the kids loved the zoo trip", 0),
	}
	for i := range turns {
		turns[i].Sources = []string{"ep_1"}
		turns[i].CreatedAt = base.Add(time.Duration(i) * time.Second)
		turns[i].UpdatedAt = turns[i].CreatedAt
	}
	q := memory.Query{Tenant: "acme", Text: "paint weekend", NoParse: true}
	fused := func(r Response) map[string]float64 {
		out := map[string]float64{}
		for _, res := range r.Results {
			out[res.Memory.ID] = res.Breakdown.Fused
		}
		return out
	}

	e := newEnv(t, Config{NoUsage: true, Weights: Weights{Relevance: 1, Recency: 0, Confidence: 0, Usage: 0}, Context: -1})
	e.write(t, turns...)
	without := fused(e.recall(t, q))
	if _, ok := without["t2"]; ok {
		t.Fatalf("without context t2 shares no term with the query, yet was recalled: %v", without)
	}

	e = newEnv(t, Config{NoUsage: true, Weights: Weights{Relevance: 1, Recency: 0, Confidence: 0, Usage: 0}, Context: 0.8})
	e.write(t, turns...)
	r := e.recall(t, q)
	with := fused(r)
	if got := ids(r); !slices.Equal(got[:2], []string{"t1", "t2"}) {
		t.Fatalf("with context %q, want the asking turn t1, then its answer t2", got)
	}
	if with["t2"] <= 0 || with["t2"] >= with["t1"] {
		t.Fatalf("with context fused %v (without %v): t2 should borrow from t1, less than t1 has", with, without)
	}
}
