package storetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// NewVectorIndex returns a fresh, empty index of dimension dim for one
// subtest.
type NewVectorIndex func(t *testing.T, dim int) memory.VectorIndex

// TestVectorIndex runs the acceptance suite for memory.VectorIndex.
func TestVectorIndex(t *testing.T, newIndex NewVectorIndex) {
	t.Run("UpsertSearchExact", func(t *testing.T) { testVectorSearch(t, newIndex(t, 8)) })
	t.Run("UpsertReplaces", func(t *testing.T) { testVectorReplace(t, newIndex(t, 8)) })
	t.Run("FiltersMatchReference", func(t *testing.T) { testVectorFilters(t, newIndex(t, 16)) })
	t.Run("TenantIsolation", func(t *testing.T) { testVectorTenants(t, newIndex(t, 8)) })
	t.Run("DimensionMismatch", func(t *testing.T) { testVectorDim(t, newIndex(t, 8)) })
	t.Run("GetDeleteList", func(t *testing.T) { testVectorGetDeleteList(t, newIndex(t, 8)) })
	t.Run("Collections", func(t *testing.T) { testVectorCollections(t, newIndex(t, 8)) })
	t.Run("RandomFiltersMatchReference", func(t *testing.T) { testVectorRandomFilters(t, newIndex(t, 8)) })
	t.Run("TiesAndLimits", func(t *testing.T) { testVectorTies(t, newIndex(t, 8)) })
	t.Run("BatchAndReupsert", func(t *testing.T) { testVectorBatch(t, newIndex(t, 8)) })
}

// Unit returns a deterministic random unit vector.
func Unit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func doc(tenant, id string, v []float32) memory.VectorDoc {
	return memory.VectorDoc{
		ID: id, Tenant: tenant, Vector: v, Kind: memory.KindLesson, TaskType: "report",
		Status: string(memory.StatusLive), Confidence: 0.5, Decay: 1, CreatedAt: base, UpdatedAt: base,
		RecallCount: 3, Pinned: false, Entities: []string{"csv"}, Scope: memory.UserScope("u-1"),
	}
}

func testVectorSearch(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(1, 2))
	var docs []memory.VectorDoc
	for i := range 50 {
		docs = append(docs, doc(tenant, fmt.Sprintf("d%02d", i), Unit(r, 8)))
	}
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	q := docs[7].Vector
	hits, err := x.Search(ctx, memory.CollectionMemories, q, memory.VectorFilter{Tenant: tenant}, 5)
	must(t, err)
	if len(hits) != 5 || hits[0].Doc.ID != "d07" || math.Abs(hits[0].Score-1) > 1e-4 {
		t.Fatalf("search for d07's own vector = %+v", hits)
	}
	// Exact top-5 by cosine.
	ref := memory.NewMemIndex(8)
	must(t, ref.Upsert(ctx, memory.CollectionMemories, docs))
	want, _ := ref.Search(ctx, memory.CollectionMemories, q, memory.VectorFilter{Tenant: tenant}, 5)
	for i := range want {
		if hits[i].Doc.ID != want[i].Doc.ID || math.Abs(hits[i].Score-want[i].Score) > 1e-4 {
			t.Fatalf("hit %d = %s %.4f, want %s %.4f", i, hits[i].Doc.ID, hits[i].Score, want[i].Doc.ID, want[i].Score)
		}
		if hits[i].Doc.Vector != nil {
			t.Fatalf("search hits carry vectors")
		}
	}
	h := hits[0].Doc
	if h.Tenant != tenant || h.Kind != memory.KindLesson || h.TaskType != "report" || h.Status != "live" ||
		h.Confidence != 0.5 || h.Decay != 1 || !h.CreatedAt.Equal(base) || h.RecallCount != 3 || !slices.Equal(h.Entities, []string{"csv"}) {
		t.Fatalf("hit fields = %+v", h)
	}
	none, err := x.Search(ctx, memory.CollectionMemories, q, memory.VectorFilter{Tenant: tenant + "x"}, 5)
	must(t, err)
	if len(none) != 0 {
		t.Fatalf("search of an empty tenant = %d hits", len(none))
	}
}

func testVectorReplace(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(3, 4))
	a, b := Unit(r, 8), Unit(r, 8)
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{doc(tenant, "m1", a)}))
	d := doc(tenant, "m1", b)
	d.Status, d.Confidence = string(memory.StatusSuperseded), 0.2
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{d}))
	hits, err := x.Search(ctx, memory.CollectionMemories, b, memory.VectorFilter{Tenant: tenant}, 10)
	must(t, err)
	if len(hits) != 1 || math.Abs(hits[0].Score-1) > 1e-4 || hits[0].Doc.Status != "superseded" || hits[0].Doc.Confidence != 0.2 {
		t.Fatalf("after replacing m1: %+v", hits)
	}
}

func testVectorFilters(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(5, 6))
	kinds := memory.Kinds
	statuses := []string{"live", "superseded", "cold", "archived"}
	var docs []memory.VectorDoc
	for i := range 200 {
		d := doc(tenant, fmt.Sprintf("d%03d", i), Unit(r, 16))
		d.Kind = kinds[i%len(kinds)]
		d.TaskType = []string{"report", "import", ""}[i%3]
		d.Status = statuses[i%len(statuses)]
		d.Confidence = float64(i%10) / 10
		d.Scope = []memory.Scope{"", memory.SharedScope, memory.UserScope("u-1"), memory.UserScope("u-2"), memory.AgentScope("bot")}[i%5]
		d.Entities = [][]string{{"csv"}, {"utc", "report"}, nil, {"o'brien \"quoted\""}}[i%4]
		d.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		docs = append(docs, d)
	}
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	ref := memory.NewMemIndex(16)
	must(t, ref.Upsert(ctx, memory.CollectionMemories, docs))
	filters := []memory.VectorFilter{
		{Kinds: []memory.Kind{memory.KindPreference}},
		{Kinds: []memory.Kind{memory.KindLesson, memory.KindRule}, Statuses: []string{"live"}},
		{TaskType: "report", MinConfidence: 0.5},
		{Entities: []string{"utc"}},
		{Entities: []string{"o'brien \"quoted\"", "csv"}},
		{CreatedAfter: base.Add(50 * time.Hour), CreatedBefore: base.Add(120 * time.Hour)},
		{Statuses: []string{"cold", "archived"}, Kinds: []memory.Kind{memory.KindFact}},
		{TaskType: "no-such-type"},
		{Scopes: memory.Visible("", "")},
		{Scopes: memory.Visible("u-1", ""), Kinds: []memory.Kind{memory.KindPreference, memory.KindRule}},
		{Scopes: memory.Visible("u-2", "bot")},
		{Scopes: []memory.Scope{memory.UserScope(`u-1" || tenant != "`)}},
		{TaskType: `x" || tenant != "`},
	}
	q := Unit(r, 16)
	for i, f := range filters {
		f.Tenant = tenant
		got, err := x.Search(ctx, memory.CollectionMemories, q, f, 10)
		must(t, err)
		want, _ := ref.Search(ctx, memory.CollectionMemories, q, f, 10)
		if !slices.Equal(hitIDs(got), hitIDs(want)) {
			t.Fatalf("filter %d %+v:\n got %v\nwant %v", i, f, hitIDs(got), hitIDs(want))
		}
		for _, h := range got {
			if !f.Match(h.Doc) {
				t.Fatalf("filter %d returned %s which does not match", i, h.Doc.ID)
			}
		}
	}
}

func testVectorTenants(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	a, b := Tenant(t)+"a", Tenant(t)+"b"
	r := rand.New(rand.NewPCG(7, 8))
	v := Unit(r, 8)
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{doc(a, "same-id", v), doc(b, "same-id", Unit(r, 8))}))
	must(t, x.Delete(ctx, memory.CollectionMemories, b, []string{"same-id"}))
	hits, err := x.Search(ctx, memory.CollectionMemories, v, memory.VectorFilter{Tenant: a}, 10)
	must(t, err)
	if len(hits) != 1 || hits[0].Doc.Tenant != a || math.Abs(hits[0].Score-1) > 1e-4 {
		t.Fatalf("same ID in two tenants: deleting from b changed a: %+v", hits)
	}
	if hits, _ := x.Search(ctx, memory.CollectionMemories, v, memory.VectorFilter{Tenant: b}, 10); len(hits) != 0 {
		t.Fatalf("tenant b still has %d docs", len(hits))
	}
}

func testVectorDim(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	err := x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{doc(tenant, "m1", make([]float32, 5))})
	if !memory.IsInvalid(err) {
		t.Fatalf("upsert of a 5-dim vector into an 8-dim index = %v, want EINVALID", err)
	}
	if _, err := x.Search(ctx, memory.CollectionMemories, make([]float32, 3), memory.VectorFilter{Tenant: tenant}, 5); !memory.IsInvalid(err) {
		t.Fatalf("search with a 3-dim vector = %v, want EINVALID", err)
	}
	if _, err := x.Search(ctx, memory.CollectionMemories, make([]float32, 8), memory.VectorFilter{}, 5); !memory.IsInvalid(err) {
		t.Fatalf("search without a tenant = %v, want EINVALID", err)
	}
}

func testVectorGetDeleteList(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(9, 10))
	var docs []memory.VectorDoc
	for i := range 25 {
		docs = append(docs, doc(tenant, fmt.Sprintf("id%02d", i), Unit(r, 8)))
	}
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	got, err := x.Get(ctx, memory.CollectionMemories, tenant, []string{"id03", "nope", "id10"})
	must(t, err)
	slices.SortFunc(got, func(a, b memory.VectorDoc) int { return strings.Compare(a.ID, b.ID) })
	if len(got) != 2 || got[0].ID != "id03" || len(got[0].Vector) != 8 || math.Abs(memory.Cosine(got[0].Vector, docs[3].Vector)-1) > 1e-4 {
		t.Fatalf("Get = %+v", got)
	}
	must(t, x.Delete(ctx, memory.CollectionMemories, tenant, []string{"id03", "nope"}))
	var listed []string
	after := ""
	for {
		page, err := x.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: tenant}, after, 10)
		must(t, err)
		if len(page) == 0 {
			break
		}
		for _, d := range page {
			listed = append(listed, d.ID)
		}
		after = page[len(page)-1].ID
	}
	if len(listed) != 24 || slices.Contains(listed, "id03") || !slices.IsSorted(listed) {
		t.Fatalf("List after delete = %v", listed)
	}
	hits, err := x.Search(ctx, memory.CollectionMemories, docs[3].Vector, memory.VectorFilter{Tenant: tenant}, 1)
	must(t, err)
	if len(hits) == 1 && hits[0].Doc.ID == "id03" {
		t.Fatalf("deleted doc still searchable")
	}
}

func testVectorCollections(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(11, 12))
	v := Unit(r, 8)
	ep := doc(tenant, "ep1", v)
	ep.Kind = ""
	must(t, x.Upsert(ctx, memory.CollectionEpisodes, []memory.VectorDoc{ep}))
	if hits, _ := x.Search(ctx, memory.CollectionMemories, v, memory.VectorFilter{Tenant: tenant}, 5); len(hits) != 0 {
		t.Fatalf("an episode leaked into the memories collection")
	}
	hits, err := x.Search(ctx, memory.CollectionEpisodes, v, memory.VectorFilter{Tenant: tenant}, 5)
	must(t, err)
	if len(hits) != 1 || hits[0].Doc.ID != "ep1" {
		t.Fatalf("episodes search = %+v", hits)
	}
}

func hitIDs(hs []memory.VectorHit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.Doc.ID)
	}
	return out
}

// testVectorRandomFilters compares listings and searches under many random
// filters with the reference, field by field: every index must select
// exactly what VectorFilter.Match selects.
func testVectorRandomFilters(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(13, 14))
	kinds := memory.Kinds
	statuses := []string{"live", "superseded", "cold", "archived"}
	entities := []string{"csv", "utc", "报表", `a"b`, "x\\y"}
	var docs []memory.VectorDoc
	for i := range 120 {
		d := doc(tenant, fmt.Sprintf("r%03d", i), Unit(r, 8))
		d.Kind = kinds[r.IntN(len(kinds))]
		d.TaskType = []string{"report", "import", "", "报表"}[r.IntN(4)]
		d.Status = statuses[r.IntN(len(statuses))]
		d.Confidence = float64(r.IntN(11)) / 10
		d.Decay = r.Float64()
		d.RecallCount = r.IntN(5)
		d.Pinned = r.IntN(2) == 0
		d.CreatedAt = base.Add(time.Duration(r.IntN(100)) * time.Hour)
		d.UpdatedAt = d.CreatedAt.Add(time.Minute)
		d.Entities = nil
		for _, e := range entities {
			if r.IntN(3) == 0 {
				d.Entities = append(d.Entities, e)
			}
		}
		docs = append(docs, d)
	}
	// Another tenant's documents must never appear.
	other := doc(tenant+"x", "r000", Unit(r, 8))
	must(t, x.Upsert(ctx, memory.CollectionMemories, append(slices.Clone(docs), other)))
	ref := memory.NewMemIndex(8)
	must(t, ref.Upsert(ctx, memory.CollectionMemories, docs))
	for i := range 40 {
		f := memory.VectorFilter{Tenant: tenant}
		if r.IntN(2) == 0 {
			f.Kinds = []memory.Kind{kinds[r.IntN(4)], kinds[r.IntN(4)]}
		}
		if r.IntN(3) == 0 {
			f.TaskType = []string{"report", "import", "报表", "none"}[r.IntN(4)]
		}
		if r.IntN(2) == 0 {
			f.Statuses = []string{statuses[r.IntN(4)]}
		}
		if r.IntN(3) == 0 {
			f.MinConfidence = float64(r.IntN(11)) / 10
		}
		if r.IntN(3) == 0 {
			f.Entities = []string{entities[r.IntN(len(entities))]}
		}
		if r.IntN(3) == 0 {
			f.CreatedAfter = base.Add(time.Duration(r.IntN(100)) * time.Hour)
		}
		if r.IntN(3) == 0 {
			f.CreatedBefore = base.Add(time.Duration(r.IntN(100)) * time.Hour)
		}
		want, _ := ref.List(ctx, memory.CollectionMemories, f, "", 0)
		got, err := x.List(ctx, memory.CollectionMemories, f, "", 0)
		must(t, err)
		if !slices.Equal(docIDs(got), docIDs(want)) {
			t.Fatalf("filter %d %+v: List\n got %v\nwant %v", i, f, docIDs(got), docIDs(want))
		}
		for j := range got {
			if !sameFields(got[j], want[j]) {
				t.Fatalf("filter %d: listed %+v, stored %+v", i, got[j], want[j])
			}
		}
		q := Unit(r, 8)
		hits, err := x.Search(ctx, memory.CollectionMemories, q, f, 200)
		must(t, err)
		wantHits, _ := ref.Search(ctx, memory.CollectionMemories, q, f, 200)
		if !slices.Equal(hitIDs(hits), hitIDs(wantHits)) {
			t.Fatalf("filter %d %+v: Search\n got %v\nwant %v", i, f, hitIDs(hits), hitIDs(wantHits))
		}
	}
}

// testVectorTies checks tie-breaking by ID, k, and paging from an ID that
// is not stored.
func testVectorTies(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(15, 16))
	v := Unit(r, 8)
	var docs []memory.VectorDoc
	for _, id := range []string{"c", "a", "d", "b"} {
		docs = append(docs, doc(tenant, id, v))
	}
	docs = append(docs, doc(tenant, "e", Unit(r, 8)))
	must(t, x.Upsert(ctx, memory.CollectionMemories, docs))
	f := memory.VectorFilter{Tenant: tenant}
	hits, err := x.Search(ctx, memory.CollectionMemories, v, f, 3)
	must(t, err)
	if !slices.Equal(hitIDs(hits), []string{"a", "b", "c"}) {
		t.Fatalf("equal scores must be ordered by ID: %v", hitIDs(hits))
	}
	if hits, err := x.Search(ctx, memory.CollectionMemories, v, f, 0); err != nil || len(hits) != 0 {
		t.Fatalf("k = 0: %v, %v", hitIDs(hits), err)
	}
	if hits, err := x.Search(ctx, memory.CollectionMemories, v, f, 50); err != nil || len(hits) != 5 || hits[4].Doc.ID != "e" {
		t.Fatalf("k past the number of documents: %v, %v", hitIDs(hits), err)
	}
	page, err := x.List(ctx, memory.CollectionMemories, f, "bb", 2)
	must(t, err)
	if !slices.Equal(docIDs(page), []string{"c", "d"}) {
		t.Fatalf("List after an unstored ID: %v", docIDs(page))
	}
	for _, d := range page {
		if d.Vector != nil {
			t.Fatalf("List returned vectors")
		}
	}
	got, err := x.Get(ctx, memory.CollectionMemories, tenant, []string{"e"})
	must(t, err)
	if len(got) != 1 || !slices.Equal(got[0].Vector, docs[4].Vector) {
		t.Fatalf("Get must return the vector as stored: %+v", got)
	}
}

// testVectorBatch checks that a batch holding an ID twice keeps the last,
// and that a deleted ID can be written again.
func testVectorBatch(t *testing.T, x memory.VectorIndex) {
	ctx := context.Background()
	tenant := Tenant(t)
	r := rand.New(rand.NewPCG(17, 18))
	first, second := doc(tenant, "m1", Unit(r, 8)), doc(tenant, "m1", Unit(r, 8))
	second.Status = "cold"
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{first, second}))
	got, err := x.Get(ctx, memory.CollectionMemories, tenant, []string{"m1"})
	must(t, err)
	if len(got) != 1 || got[0].Status != "cold" || !slices.Equal(got[0].Vector, second.Vector) {
		t.Fatalf("the last of two versions in one batch must win: %+v", got)
	}
	must(t, x.Delete(ctx, memory.CollectionMemories, tenant, []string{"m1"}))
	must(t, x.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{first}))
	hits, err := x.Search(ctx, memory.CollectionMemories, first.Vector, memory.VectorFilter{Tenant: tenant}, 5)
	must(t, err)
	if len(hits) != 1 || hits[0].Doc.Status != "live" || math.Abs(hits[0].Score-1) > 1e-4 {
		t.Fatalf("a deleted ID written again: %+v", hits)
	}
	if err := x.Upsert(ctx, memory.CollectionMemories, nil); err != nil {
		t.Fatalf("an empty upsert: %v", err)
	}
	if err := x.Delete(ctx, memory.CollectionMemories, tenant, nil); err != nil {
		t.Fatalf("an empty delete: %v", err)
	}
}

// sameFields compares documents without their vectors, with times compared
// as instants.
func sameFields(a, b memory.VectorDoc) bool {
	return a.ID == b.ID && a.Tenant == b.Tenant && a.Scope.Norm() == b.Scope.Norm() && a.Kind == b.Kind && a.TaskType == b.TaskType &&
		a.Status == b.Status && a.Confidence == b.Confidence && a.Decay == b.Decay &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) && a.RecallCount == b.RecallCount &&
		a.Pinned == b.Pinned && slices.Equal(a.Entities, b.Entities)
}

func docIDs(ds []memory.VectorDoc) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
