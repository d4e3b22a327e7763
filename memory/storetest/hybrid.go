package storetest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// NewHybridSearcher returns a fresh, empty hybrid index of dimension dim
// for one subtest.
type NewHybridSearcher func(t *testing.T, dim int) memory.HybridSearcher

// TestHybridSearcher runs the acceptance suite for memory.HybridSearcher on
// the memories collection. The expected results are computed here, from
// the documents as written, without package memory's hybrid code: cosine
// similarity on the dense side, the dot product on the sparse side, each
// side's best PerSide (the sparse side only among documents sharing a term
// with the query), their union, ordered by the weighted reranker's fused
// score.
func TestHybridSearcher(t *testing.T, newIndex NewHybridSearcher) {
	t.Run("UnionScoresRanks", func(t *testing.T) { testHybridUnion(t, newIndex(t, 8)) })
	t.Run("SparseOnly", func(t *testing.T) { testHybridSparseOnly(t, newIndex(t, 8)) })
	t.Run("DenseOnly", func(t *testing.T) { testHybridDenseOnly(t, newIndex(t, 8)) })
	t.Run("SparseMatchesSharedTermsOnly", func(t *testing.T) { testHybridSharedTerms(t, newIndex(t, 8)) })
	t.Run("FiltersBothSides", func(t *testing.T) { testHybridFilters(t, newIndex(t, 8)) })
	t.Run("TenantIsolation", func(t *testing.T) { testHybridTenants(t, newIndex(t, 8)) })
	t.Run("UpsertReplacesSparse", func(t *testing.T) { testHybridReplace(t, newIndex(t, 8)) })
	t.Run("GetReturnsSparse", func(t *testing.T) { testHybridGet(t, newIndex(t, 8)) })
	t.Run("InvalidQueries", func(t *testing.T) { testHybridInvalidQueries(t, newIndex(t, 8)) })
	t.Run("InvalidDocuments", func(t *testing.T) { testHybridInvalidDocs(t, newIndex(t, 8)) })
}

// hybridVocab are the term indices of the suite's sparse vectors, with the
// extremes of the allowed range.
var hybridVocab = []uint32{0, 1, 7, 42, 1000, 65536, 1 << 20, 1 << 31, 3_000_000_000, memory.MaxSparseIndex - 1, memory.MaxSparseIndex}

// sparseOf builds a sparse vector from index → weight, sorted, without
// package memory's constructor.
func sparseOf(w map[uint32]float32) memory.SparseVector {
	var v memory.SparseVector
	for i := range w {
		v.Indices = append(v.Indices, i)
	}
	slices.Sort(v.Indices)
	for _, i := range v.Indices {
		v.Values = append(v.Values, w[i])
	}
	return v
}

// randomSparse returns a sparse vector of n distinct terms of hybridVocab
// with weights in [0.1, 3).
func randomSparse(r *rand.Rand, n int) memory.SparseVector {
	w := map[uint32]float32{}
	for len(w) < n {
		w[hybridVocab[r.IntN(len(hybridVocab))]] = float32(0.1 + 2.9*r.Float64())
	}
	return sparseOf(w)
}

// hybridDocs returns n documents with random vectors and 0 to 4 random
// terms; every seventh has no sparse vector at all.
func hybridDocs(r *rand.Rand, tenant string, n, dim int) []memory.VectorDoc {
	var docs []memory.VectorDoc
	for i := range n {
		d := doc(tenant, fmt.Sprintf("h%03d", i), Unit(r, dim))
		if i%7 != 3 {
			d.Sparse = randomSparse(r, 1+r.IntN(4))
		}
		docs = append(docs, d)
	}
	return docs
}

// refHit is an expected hit.
type refHit struct {
	id            string
	dense, sparse float64
	denseRank     int
	sparseRank    int
}

func refCosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func refDot(a, b memory.SparseVector) float64 {
	w := map[uint32]float64{}
	for i, x := range a.Indices {
		w[x] = float64(a.Values[i])
	}
	s := 0.0
	for i, x := range b.Indices {
		s += w[x] * float64(b.Values[i])
	}
	return s
}

// refFused is Milvus' weighted reranker: cosine squashed as (1+s)/2, an
// inner product as 1/2 + atan(s)/π, a side that did not return the hit
// counting zero.
func refFused(h refHit, w float64) float64 {
	s := 0.0
	if h.denseRank > 0 {
		s += w * (1 + h.dense) / 2
	}
	if h.sparseRank > 0 {
		s += (1 - w) * (0.5 + math.Atan(h.sparse)/math.Pi)
	}
	return s
}

// hybridRef is what a hybrid search of docs (those of the query's tenant,
// filtered here with VectorFilter.Match, the filter semantics every index
// implements) must return.
func hybridRef(docs []memory.VectorDoc, q memory.HybridQuery) []refHit {
	var hits []refHit
	for _, d := range docs {
		if !q.Filter.Match(d) {
			continue
		}
		h := refHit{id: d.ID, sparse: refDot(q.Sparse, d.Sparse)}
		if q.Dense != nil {
			h.dense = refCosine(q.Dense, d.Vector)
		}
		hits = append(hits, h)
	}
	rank := func(score func(refHit) float64, set func(*refHit, int), positiveOnly bool) {
		order := make([]int, len(hits))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(score(hits[b]), score(hits[a])); c != 0 {
				return c
			}
			return cmp.Compare(hits[a].id, hits[b].id)
		})
		for r, i := range order {
			if r == q.PerSide || positiveOnly && score(hits[i]) <= 0 {
				break
			}
			set(&hits[i], r+1)
		}
	}
	if q.Dense != nil {
		rank(func(h refHit) float64 { return h.dense }, func(h *refHit, r int) { h.denseRank = r }, false)
	}
	if len(q.Sparse.Indices) > 0 {
		rank(func(h refHit) float64 { return h.sparse }, func(h *refHit, r int) { h.sparseRank = r }, true)
	}
	hits = slices.DeleteFunc(hits, func(h refHit) bool { return h.denseRank == 0 && h.sparseRank == 0 })
	for i := range hits {
		// A side that did not return a hit scores 0 there.
		if hits[i].denseRank == 0 {
			hits[i].dense = 0
		}
		if hits[i].sparseRank == 0 {
			hits[i].sparse = 0
		}
	}
	slices.SortFunc(hits, func(a, b refHit) int {
		if c := cmp.Compare(refFused(b, q.DenseWeight), refFused(a, q.DenseWeight)); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return hits
}

// checkHybrid compares hits with the reference: the same documents in the
// same order with the same ranks, scores equal up to float32 rounding,
// the document's fields as stored and no vectors.
func checkHybrid(t *testing.T, what string, got []memory.HybridHit, want []refHit, stored []memory.VectorDoc) {
	t.Helper()
	byID := map[string]memory.VectorDoc{}
	for _, d := range stored {
		byID[d.ID] = d
	}
	show := func() string {
		s := "\n got:"
		for _, h := range got {
			s += fmt.Sprintf(" %s(d%d %.4f s%d %.4f)", h.Doc.ID, h.DenseRank, h.Dense, h.SparseRank, h.Sparse)
		}
		s += "\nwant:"
		for _, h := range want {
			s += fmt.Sprintf(" %s(d%d %.4f s%d %.4f)", h.id, h.denseRank, h.dense, h.sparseRank, h.sparse)
		}
		return s
	}
	if got == nil {
		t.Fatalf("%s: HybridSearch returned nil, want a slice (empty when nothing matches)", what)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d%s", what, len(got), len(want), show())
	}
	for i, h := range got {
		w := want[i]
		if h.Doc.ID != w.id || h.DenseRank != w.denseRank || h.SparseRank != w.sparseRank {
			t.Fatalf("%s: hit %d differs%s", what, i, show())
		}
		if math.Abs(h.Dense-w.dense) > 1e-5 || math.Abs(h.Sparse-w.sparse) > 1e-6*max(1, math.Abs(w.sparse)) {
			t.Fatalf("%s: hit %d (%s) scores dense %v sparse %v, want %v and %v", what, i, h.Doc.ID, h.Dense, h.Sparse, w.dense, w.sparse)
		}
		if h.Doc.Vector != nil || !h.Doc.Sparse.IsZero() {
			t.Fatalf("%s: hit %s carries its vectors", what, h.Doc.ID)
		}
		if d, ok := byID[h.Doc.ID]; !ok || !sameFields(h.Doc, d) {
			t.Fatalf("%s: hit %+v, stored %+v", what, h.Doc, d)
		}
	}
}

func testHybridUnion(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(21, 22))
	docs := hybridDocs(r, tenant, 60, 8)
	q := memory.HybridQuery{
		Filter: memory.VectorFilter{Tenant: tenant}, Dense: Unit(r, 8),
		Sparse: sparseOf(map[uint32]float32{7: 1.5, 1 << 20: 0.7, memory.MaxSparseIndex: 2.2}), PerSide: 6,
	}
	// One document is the best on both sides.
	docs[10].Vector, docs[10].Sparse = q.Dense, sparseOf(map[uint32]float32{7: 3, 1 << 20: 3, memory.MaxSparseIndex: 3})
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	for _, w := range []float64{0.5, 0, 1, 0.8} {
		q.DenseWeight = w
		want := hybridRef(docs, q)
		if len(want) <= q.PerSide || want[0].id != "h010" || want[0].denseRank != 1 || want[0].sparseRank != 1 {
			t.Fatalf("the suite's data is not what the test needs: %+v", want)
		}
		got, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		must(t, err)
		checkHybrid(t, fmt.Sprintf("dense weight %v", w), got, want, docs)
	}
	for _, per := range []int{1, 3, 60, 200} {
		q.PerSide, q.DenseWeight = per, 0.3
		got, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		must(t, err)
		checkHybrid(t, fmt.Sprintf("per side %d", per), got, hybridRef(docs, q), docs)
	}
}

func testHybridSparseOnly(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(23, 24))
	docs := hybridDocs(r, tenant, 50, 8)
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	for i, qs := range []memory.SparseVector{
		sparseOf(map[uint32]float32{42: 1}),
		sparseOf(map[uint32]float32{0: 0.5, 1000: 2, 3_000_000_000: 1.25}),
		randomSparse(r, 5),
	} {
		q := memory.HybridQuery{Filter: memory.VectorFilter{Tenant: tenant}, Sparse: qs, PerSide: 8, DenseWeight: 0.7}
		want := hybridRef(docs, q)
		if len(want) == 0 {
			t.Fatalf("query %d: the suite's data matches nothing", i)
		}
		got, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		must(t, err)
		checkHybrid(t, fmt.Sprintf("sparse query %d", i), got, want, docs)
		for _, h := range got {
			if h.DenseRank != 0 || h.Dense != 0 || h.SparseRank == 0 || h.Sparse <= 0 {
				t.Fatalf("sparse-only hit %+v: want no dense rank or score, a sparse rank and a positive score", h)
			}
		}
	}
}

func testHybridDenseOnly(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(25, 26))
	docs := hybridDocs(r, tenant, 50, 8)
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	for _, per := range []int{1, 7, 50, 80} {
		q := memory.HybridQuery{Filter: memory.VectorFilter{Tenant: tenant}, Dense: Unit(r, 8), PerSide: per, DenseWeight: 0.4}
		want := hybridRef(docs, q)
		if len(want) != min(per, len(docs)) {
			t.Fatalf("reference returned %d of %d documents for per side %d", len(want), len(docs), per)
		}
		got, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		must(t, err)
		checkHybrid(t, fmt.Sprintf("dense only, per side %d", per), got, want, docs)
		for i, h := range got {
			if h.DenseRank != i+1 || h.SparseRank != 0 || h.Sparse != 0 {
				t.Fatalf("dense-only hit %d: %+v", i, h)
			}
		}
	}
}

func testHybridSharedTerms(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(27, 28))
	var docs []memory.VectorDoc
	for i := range 30 {
		d := doc(tenant, fmt.Sprintf("s%02d", i), Unit(r, 8))
		switch i % 3 {
		case 0:
			d.Sparse = sparseOf(map[uint32]float32{10: float32(1 + i), 11: 1})
		case 1:
			d.Sparse = sparseOf(map[uint32]float32{20: float32(1 + i), 21: 1})
		}
		docs = append(docs, d)
	}
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	f := memory.VectorFilter{Tenant: tenant}

	got, err := x.HybridSearch(ctx, memory.CollectionMemories, memory.HybridQuery{Filter: f, Sparse: sparseOf(map[uint32]float32{10: 1}), PerSide: 100})
	must(t, err)
	if len(got) != 10 {
		t.Fatalf("a term that 10 documents hold returned %d", len(got))
	}
	for i, h := range got {
		// Weights grow with the document number: s27 first.
		if want := fmt.Sprintf("s%02d", 27-3*i); h.Doc.ID != want || h.SparseRank != i+1 || h.Sparse != float64(28-3*i) {
			t.Fatalf("hit %d = %+v, want %s with score %d", i, h, want, 28-3*i)
		}
	}
	got, err = x.HybridSearch(ctx, memory.CollectionMemories, memory.HybridQuery{Filter: f, Sparse: sparseOf(map[uint32]float32{99: 1, 12: 5}), PerSide: 100})
	must(t, err)
	if got == nil || len(got) != 0 {
		t.Fatalf("terms no document holds returned %v, want an empty slice", got)
	}
	// With a dense side every document comes back, a sparse rank only for
	// those that share the term.
	q := memory.HybridQuery{Filter: f, Dense: Unit(r, 8), Sparse: sparseOf(map[uint32]float32{21: 2}), PerSide: 100, DenseWeight: 0.5}
	got, err = x.HybridSearch(ctx, memory.CollectionMemories, q)
	must(t, err)
	checkHybrid(t, "both sides, every document", got, hybridRef(docs, q), docs)
	n := 0
	for _, h := range got {
		if h.SparseRank > 0 {
			n++
		}
	}
	if len(got) != 30 || n != 10 {
		t.Fatalf("%d hits, %d with a sparse rank; want 30 and 10", len(got), n)
	}
	none, err := x.HybridSearch(ctx, memory.CollectionMemories, memory.HybridQuery{Filter: memory.VectorFilter{Tenant: tenant + "x"}, Dense: q.Dense, Sparse: q.Sparse, PerSide: 5})
	must(t, err)
	if none == nil || len(none) != 0 {
		t.Fatalf("an empty tenant returned %v, want an empty slice", none)
	}
}

func testHybridFilters(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(29, 30))
	statuses := []string{"live", "superseded", "cold", "archived"}
	scopes := []memory.Scope{"", memory.SharedScope, memory.UserScope("u-1"), memory.UserScope("u-2"), memory.AgentScope("bot")}
	var docs []memory.VectorDoc
	for i := range 150 {
		d := doc(tenant, fmt.Sprintf("f%03d", i), Unit(r, 8))
		d.Kind = memory.Kinds[i%len(memory.Kinds)]
		d.TaskType = []string{"report", "import", ""}[i%3]
		d.Status = statuses[i%len(statuses)]
		d.Confidence = float64(i%10) / 10
		d.Scope = scopes[i%len(scopes)]
		d.Entities = [][]string{{"csv"}, {"utc", "report"}, nil, {"o'brien \"quoted\""}}[i%4]
		d.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		d.Sparse = randomSparse(r, 1+r.IntN(3))
		docs = append(docs, d)
	}
	q := memory.HybridQuery{
		Filter: memory.VectorFilter{Tenant: tenant}, Dense: Unit(r, 8),
		Sparse: sparseOf(map[uint32]float32{1: 1, 42: 0.5, 65536: 2}), PerSide: 5, DenseWeight: 0.5,
	}
	// The best document of each side fails every filter below; so does
	// another tenant's copy of the best one.
	outsider := func(id string, created time.Time) memory.VectorDoc {
		d := doc(tenant, id, Unit(r, 8))
		d.Kind, d.TaskType, d.Status, d.Confidence = memory.KindFact, "other", "superseded", 0.05
		d.Scope, d.Entities, d.CreatedAt = memory.AgentScope("other"), []string{"nothing"}, created
		return d
	}
	bestDense := outsider("best-dense", base.Add(-time.Hour))
	bestDense.Vector = q.Dense
	bestSparse := outsider("best-sparse", base.Add(1000*time.Hour))
	bestSparse.Sparse = sparseOf(map[uint32]float32{1: 50, 42: 50, 65536: 50})
	other := bestDense
	other.Tenant, other.Sparse = tenant+"x", bestSparse.Sparse
	docs = append(docs, bestDense, bestSparse)
	must(t, x.Upsert(ctx, memory.CollectionMemories, append(slices.Clone(docs), other)))

	ranks := map[string]refHit{}
	for _, h := range hybridRef(docs, q) {
		ranks[h.id] = h
	}
	if ranks["best-dense"].denseRank != 1 || ranks["best-sparse"].sparseRank != 1 {
		t.Fatalf("unfiltered, the outsiders must lead their sides: %+v", ranks)
	}
	filters := []memory.VectorFilter{
		{},
		{Scopes: memory.Visible("u-1", "")},
		{Scopes: memory.Visible("u-2", "bot")},
		{Kinds: []memory.Kind{memory.KindLesson, memory.KindRule}},
		{TaskType: "report"},
		{Statuses: []string{"live"}},
		{Statuses: []string{"cold", "archived"}, Kinds: []memory.Kind{memory.KindPreference}},
		{MinConfidence: 0.5},
		{Entities: []string{"utc"}},
		{Entities: []string{"o'brien \"quoted\"", "csv"}},
		{CreatedAfter: base.Add(30 * time.Hour), CreatedBefore: base.Add(120 * time.Hour)},
		{CreatedAfter: base.Add(100 * time.Hour)},
		{CreatedBefore: base.Add(40 * time.Hour)},
		{TaskType: "import", MinConfidence: 0.3, Scopes: memory.Visible("u-1", "bot")},
		{TaskType: `x" || tenant != "`},
	}
	for i, f := range filters {
		f.Tenant = tenant
		q.Filter = f
		want := hybridRef(docs, q)
		got, err := x.HybridSearch(ctx, memory.CollectionMemories, q)
		must(t, err)
		checkHybrid(t, fmt.Sprintf("filter %d %+v", i, f), got, want, docs)
		for _, h := range got {
			if !f.Match(h.Doc) {
				t.Fatalf("filter %d returned %s, which does not match it", i, h.Doc.ID)
			}
			if h.Doc.Tenant != tenant {
				t.Fatalf("filter %d returned a document of tenant %s", i, h.Doc.Tenant)
			}
		}
	}
}

func testHybridTenants(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	a, b := Tenant(t)+"a", Tenant(t)+"b"
	r := rand.New(rand.NewPCG(31, 32))
	q := Unit(r, 8)
	da := doc(a, "same-id", Unit(r, 8))
	da.Sparse = sparseOf(map[uint32]float32{5: 1})
	db := doc(b, "same-id", q)
	db.Sparse = sparseOf(map[uint32]float32{5: 9})
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{da, db}))
	query := func(tenant string) []memory.HybridHit {
		hits, err := x.HybridSearch(ctx, memory.CollectionMemories, memory.HybridQuery{
			Filter: memory.VectorFilter{Tenant: tenant}, Dense: q, Sparse: sparseOf(map[uint32]float32{5: 1}), PerSide: 10, DenseWeight: 0.5,
		})
		must(t, err)
		return hits
	}
	if h := query(a); len(h) != 1 || h[0].Doc.Tenant != a || h[0].Sparse != 1 || math.Abs(h[0].Dense-refCosine(q, da.Vector)) > 1e-5 {
		t.Fatalf("tenant a sees %+v, want its own document scored from its own vectors", h)
	}
	if h := query(b); len(h) != 1 || h[0].Doc.Tenant != b || h[0].Sparse != 9 || math.Abs(h[0].Dense-1) > 1e-5 {
		t.Fatalf("tenant b sees %+v", h)
	}
	must(t, x.Delete(ctx, memory.CollectionMemories, b, []string{"same-id"}))
	if h := query(a); len(h) != 1 || h[0].Doc.Tenant != a || h[0].Sparse != 1 {
		t.Fatalf("after deleting b's copy, tenant a sees %+v", h)
	}
	if h := query(b); len(h) != 0 {
		t.Fatalf("after deleting b's copy, tenant b sees %+v", h)
	}
}

func testHybridReplace(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(33, 34))
	f := memory.VectorFilter{Tenant: tenant}
	sparse := func(idx uint32) []memory.HybridHit {
		t.Helper()
		hits, err := x.HybridSearch(ctx, memory.CollectionMemories, memory.HybridQuery{Filter: f, Sparse: sparseOf(map[uint32]float32{idx: 1}), PerSide: 10})
		must(t, err)
		return hits
	}
	get := func() memory.VectorDoc {
		t.Helper()
		got, err := x.Get(ctx, memory.CollectionMemories, tenant, []string{"m1"})
		must(t, err)
		if len(got) != 1 {
			t.Fatalf("Get(m1) = %+v", got)
		}
		return got[0]
	}
	v := Unit(r, 8)
	d := doc(tenant, "m1", v)
	d.Sparse = sparseOf(map[uint32]float32{1: 1, 2: 1})
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}))
	if h := sparse(2); len(h) != 1 || h[0].Sparse != 1 {
		t.Fatalf("term 2 before the replacement: %+v", h)
	}
	// The same dense vector with other terms: only the new terms match.
	d.Sparse = sparseOf(map[uint32]float32{3: 2})
	d.Status = "cold"
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}))
	if h := sparse(1); len(h) != 0 {
		t.Fatalf("an old term still matches after the sparse vector changed: %+v", h)
	}
	if h := sparse(3); len(h) != 1 || h[0].Sparse != 2 || h[0].Doc.Status != "cold" {
		t.Fatalf("the new term: %+v", h)
	}
	if g := get(); !slices.Equal(g.Sparse.Indices, []uint32{3}) || !slices.Equal(g.Sparse.Values, []float32{2}) {
		t.Fatalf("Get after the replacement: sparse %+v", g.Sparse)
	}
	// Another dense vector and no terms at all.
	d.Vector, d.Sparse = Unit(r, 8), memory.SparseVector{}
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}))
	if h := sparse(3); len(h) != 0 {
		t.Fatalf("a document whose terms were removed still matches: %+v", h)
	}
	if g := get(); !g.Sparse.IsZero() {
		t.Fatalf("Get of a document without terms: sparse %+v", g.Sparse)
	}
	// Two versions in one batch: the last wins, terms included.
	first, second := d, d
	first.Sparse = sparseOf(map[uint32]float32{4: 1})
	second.Sparse = sparseOf(map[uint32]float32{5: 1})
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{first, second}))
	if h4, h5 := sparse(4), sparse(5); len(h4) != 0 || len(h5) != 1 {
		t.Fatalf("after a batch with two versions: term 4 %+v, term 5 %+v", h4, h5)
	}
	must(t, x.Delete(ctx, memory.CollectionMemories, tenant, []string{"m1"}))
	if h := sparse(5); len(h) != 0 {
		t.Fatalf("a deleted document matches: %+v", h)
	}
}

func testHybridGet(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(35, 36))
	docs := []memory.VectorDoc{doc(tenant, "g1", Unit(r, 8)), doc(tenant, "g2", Unit(r, 8)), doc(tenant, "g3", Unit(r, 8))}
	docs[0].Sparse = sparseOf(map[uint32]float32{0: 1e-20, 17: 0.333333343, 1 << 31: 1e30, memory.MaxSparseIndex: 2.5})
	docs[2].Sparse = sparseOf(map[uint32]float32{memory.MaxSparseIndex: 0.25})
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	got, err := x.Get(ctx, memory.CollectionMemories, tenant, []string{"g3", "g1", "g2", "nope"})
	must(t, err)
	slices.SortFunc(got, func(a, b memory.VectorDoc) int { return cmp.Compare(a.ID, b.ID) })
	if len(got) != 3 {
		t.Fatalf("Get = %+v", got)
	}
	for i, g := range got {
		w := docs[i].Sparse
		if !slices.Equal(g.Sparse.Indices, w.Indices) || !slices.Equal(g.Sparse.Values, w.Values) {
			t.Fatalf("Get(%s) sparse = %+v, stored %+v", g.ID, g.Sparse, w)
		}
		if !slices.Equal(g.Vector, docs[i].Vector) || !sameFields(g, docs[i]) {
			t.Fatalf("Get(%s) = %+v, stored %+v", g.ID, g, docs[i])
		}
	}
	if !got[1].Sparse.IsZero() {
		t.Fatalf("Get of a document without terms: %+v", got[1].Sparse)
	}
	// Search and List return neither vector.
	hits, err := x.Search(ctx, memory.CollectionMemories, docs[0].Vector, memory.VectorFilter{Tenant: tenant}, 3)
	must(t, err)
	listed, err := x.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: tenant}, "", 0)
	must(t, err)
	for _, h := range hits {
		if !h.Doc.Sparse.IsZero() {
			t.Fatalf("Search hit %s carries its sparse vector", h.Doc.ID)
		}
	}
	for _, d := range listed {
		if !d.Sparse.IsZero() {
			t.Fatalf("List returned %s with its sparse vector", d.ID)
		}
	}
}

func testHybridInvalidQueries(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(37, 38))
	d := doc(tenant, "m1", Unit(r, 8))
	d.Sparse = sparseOf(map[uint32]float32{1: 1})
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}))
	good := memory.HybridQuery{Filter: memory.VectorFilter{Tenant: tenant}, Dense: Unit(r, 8), Sparse: sparseOf(map[uint32]float32{1: 1}), PerSide: 5, DenseWeight: 0.5}
	if _, err := x.HybridSearch(ctx, memory.CollectionMemories, good); err != nil {
		t.Fatalf("a valid query: %v", err)
	}
	nan := float32(math.NaN())
	tests := []struct {
		name   string
		change func(*memory.HybridQuery)
	}{
		{"no tenant", func(q *memory.HybridQuery) { q.Filter.Tenant = "" }},
		{"per side 0", func(q *memory.HybridQuery) { q.PerSide = 0 }},
		{"per side past the maximum", func(q *memory.HybridQuery) { q.PerSide = memory.MaxHybridPerSide + 1 }},
		{"negative dense weight", func(q *memory.HybridQuery) { q.DenseWeight = -0.1 }},
		{"dense weight above 1", func(q *memory.HybridQuery) { q.DenseWeight = 1.5 }},
		{"NaN dense weight", func(q *memory.HybridQuery) { q.DenseWeight = math.NaN() }},
		{"wrong dense dimension", func(q *memory.HybridQuery) { q.Dense = make([]float32, 3) }},
		{"NaN in the dense vector", func(q *memory.HybridQuery) { q.Dense = slices.Clone(q.Dense); q.Dense[2] = nan }},
		{"neither vector", func(q *memory.HybridQuery) { q.Dense, q.Sparse = nil, memory.SparseVector{} }},
		{"unsorted sparse indices", func(q *memory.HybridQuery) {
			q.Sparse = memory.SparseVector{Indices: []uint32{5, 2}, Values: []float32{1, 1}}
		}},
		{"duplicate sparse indices", func(q *memory.HybridQuery) {
			q.Sparse = memory.SparseVector{Indices: []uint32{2, 2}, Values: []float32{1, 1}}
		}},
		{"mismatched sparse lengths", func(q *memory.HybridQuery) {
			q.Sparse = memory.SparseVector{Indices: []uint32{1, 2}, Values: []float32{1}}
		}},
		{"values without indices", func(q *memory.HybridQuery) { q.Sparse = memory.SparseVector{Values: []float32{1}} }},
		{"negative sparse weight", func(q *memory.HybridQuery) {
			q.Sparse = memory.SparseVector{Indices: []uint32{1}, Values: []float32{-1}}
		}},
		{"NaN sparse weight", func(q *memory.HybridQuery) {
			q.Sparse = memory.SparseVector{Indices: []uint32{1}, Values: []float32{nan}}
		}},
		{"sparse index 2^32-1", func(q *memory.HybridQuery) {
			q.Sparse = memory.SparseVector{Indices: []uint32{math.MaxUint32}, Values: []float32{1}}
		}},
	}
	for _, tt := range tests {
		q := good
		tt.change(&q)
		if _, err := x.HybridSearch(ctx, memory.CollectionMemories, q); !memory.IsInvalid(err) {
			t.Errorf("%s: %v, want EINVALID", tt.name, err)
		}
	}
	if _, err := x.HybridSearch(ctx, "other", good); !memory.IsInvalid(err) {
		t.Errorf("unknown collection: %v, want EINVALID", err)
	}
}

func testHybridInvalidDocs(t *testing.T, x memory.HybridSearcher) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(39, 40))
	tests := []struct {
		name   string
		sparse memory.SparseVector
		dim    int
	}{
		{"unsorted indices", memory.SparseVector{Indices: []uint32{9, 3}, Values: []float32{1, 1}}, 8},
		{"duplicate indices", memory.SparseVector{Indices: []uint32{3, 3}, Values: []float32{1, 1}}, 8},
		{"mismatched lengths", memory.SparseVector{Indices: []uint32{3}, Values: []float32{1, 2}}, 8},
		{"negative weight", memory.SparseVector{Indices: []uint32{3}, Values: []float32{-0.5}}, 8},
		{"NaN weight", memory.SparseVector{Indices: []uint32{3}, Values: []float32{float32(math.NaN())}}, 8},
		{"infinite weight", memory.SparseVector{Indices: []uint32{3}, Values: []float32{float32(math.Inf(1))}}, 8},
		{"index 2^32-1", memory.SparseVector{Indices: []uint32{math.MaxUint32}, Values: []float32{1}}, 8},
		{"wrong dense dimension", sparseOf(map[uint32]float32{3: 1}), 5},
	}
	for _, tt := range tests {
		valid := doc(tenant, "valid", Unit(r, 8))
		valid.Sparse = sparseOf(map[uint32]float32{3: 1})
		bad := doc(tenant, "bad", Unit(r, tt.dim))
		bad.Sparse = tt.sparse
		if err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{valid, bad}); !memory.IsInvalid(err) {
			t.Errorf("%s: upsert = %v, want EINVALID", tt.name, err)
		}
		got, err := x.Get(ctx, memory.CollectionMemories, tenant, []string{"valid", "bad"})
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("%s: a rejected batch stored %d documents", tt.name, len(got))
		}
	}
}
