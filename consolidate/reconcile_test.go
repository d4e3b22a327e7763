package consolidate

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

var t1 = time.Date(2026, 2, 1, 8, 0, 0, 123456789, time.UTC)

func TestReconcile(t *testing.T) {
	e := func(id, status string, at time.Time) Entry {
		return Entry{ID: id, Status: status, Kind: memory.KindLesson, TaskType: "coding", UpdatedAt: at}
	}
	ms := t1.Truncate(time.Millisecond) // what Milvus and ClickHouse keep
	withKind := e("a", "live", t1)
	withKind.Kind = memory.KindFact
	withType := e("a", "live", t1)
	withType.TaskType = "ops"
	tests := []struct {
		name             string
		want, have       []Entry
		known            []string
		upsert, del      []string
		missing, stale   int
		extra, unindexed int
	}{
		{name: "empty"},
		{name: "in sync", want: []Entry{e("a", "live", t1)}, have: []Entry{e("a", "live", t1)}},
		{name: "in sync at millisecond precision", want: []Entry{e("a", "live", t1)}, have: []Entry{e("a", "live", ms)}},
		{name: "missing", want: []Entry{e("b", "live", t1), e("a", "live", t1)}, upsert: []string{"a", "b"}, missing: 2},
		{name: "older version indexed", want: []Entry{e("a", "live", t1)}, have: []Entry{e("a", "live", t1.Add(-time.Hour))}, upsert: []string{"a"}, stale: 1},
		{name: "status changed without a new time (an archived episode)", want: []Entry{e("a", "cold", t1)}, have: []Entry{e("a", "live", t1)}, upsert: []string{"a"}, stale: 1},
		{name: "kind differs", want: []Entry{withKind}, have: []Entry{e("a", "live", t1)}, upsert: []string{"a"}, stale: 1},
		{name: "task type differs", want: []Entry{withType}, have: []Entry{e("a", "live", t1)}, upsert: []string{"a"}, stale: 1},
		{name: "unknown to the store", have: []Entry{e("z", "live", t1), e("y", "live", t1)}, del: []string{"y", "z"}, extra: 2},
		{name: "known but not to be indexed", have: []Entry{e("f", "forgotten", t1)}, known: []string{"f"}, del: []string{"f"}, unindexed: 1},
		{
			name: "an ID listed twice counts with its latest version",
			want: []Entry{e("a", "live", t1.Add(-time.Hour)), e("a", "cold", t1)},
			have: []Entry{e("a", "cold", t1)},
		},
	}
	for _, tt := range tests {
		got := Reconcile(tt.want, tt.have, tt.known)
		want := Reconciliation{Upsert: tt.upsert, Delete: tt.del, Missing: tt.missing, Stale: tt.stale, Extra: tt.extra, Unindexed: tt.unindexed}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, want)
		}
		if got.Empty() != (len(tt.upsert)+len(tt.del) == 0) {
			t.Errorf("%s: Empty() = %v", tt.name, got.Empty())
		}
	}
}

func TestIndexed(t *testing.T) {
	for s, want := range map[memory.Status]bool{
		memory.StatusLive: true, memory.StatusCold: true, memory.StatusSuperseded: true,
		memory.StatusArchived: false, memory.StatusForgotten: false,
	} {
		if Indexed(s) != want {
			t.Errorf("Indexed(%s) = %v", s, !want)
		}
	}
}

func mem(id string, version int, status memory.Status, at time.Time) memory.Memory {
	return memory.Memory{
		ID: id, Tenant: "acme", Version: version, Kind: memory.KindLesson, Content: "lesson " + id,
		Status: status, Confidence: 0.5, Decay: 1, CreatedAt: t1, UpdatedAt: at,
	}
}

// TestReconcileRepairsTheIndex breaks an index every way it can drift from
// the store, applies the plan, and checks that a second reconciliation
// finds nothing left to do.
func TestReconcileRepairsTheIndex(t *testing.T) {
	ctx := context.Background()
	store := memory.NewMemStore()
	index := memory.NewMemIndex(2)
	vec := []float32{1, 0}
	later := t1.Add(time.Hour)

	// The store's current state.
	current := []memory.Memory{
		mem("live", 1, memory.StatusLive, t1),
		mem("cold", 2, memory.StatusCold, later),             // decayed after it was indexed
		mem("superseded", 2, memory.StatusSuperseded, later), // never reindexed
		mem("archived", 2, memory.StatusArchived, later),     // still indexed as live
		mem("forgotten", 2, memory.StatusForgotten, later),   // still indexed
		mem("new", 1, memory.StatusLive, later),              // never indexed
	}
	older := []memory.Memory{
		mem("cold", 1, memory.StatusLive, t1), mem("superseded", 1, memory.StatusLive, t1),
		mem("archived", 1, memory.StatusLive, t1), mem("forgotten", 1, memory.StatusLive, t1),
	}
	if err := store.PutMemories(ctx, append(older, current...)); err != nil {
		t.Fatal(err)
	}
	// The index as an earlier run left it, plus a stray document.
	var docs []memory.VectorDoc
	for _, m := range append(older, mem("live", 1, memory.StatusLive, t1), mem("stray", 1, memory.StatusLive, t1)) {
		docs = append(docs, memory.VectorDocOf(m, vec))
	}
	if err := index.Upsert(ctx, memory.CollectionMemories, docs); err != nil {
		t.Fatal(err)
	}

	plan := func() Reconciliation {
		ms, err := store.Memories(ctx, memory.MemoryFilter{Tenant: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := index.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: "acme"}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReconcileMemories("acme", ms, ds)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := plan()
	want := Reconciliation{
		Upsert:  []string{"cold", "new", "superseded"},
		Delete:  []string{"archived", "forgotten", "stray"},
		Missing: 1, Stale: 2, Extra: 1, Unindexed: 2,
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("plan\n got %+v\nwant %+v", r, want)
	}

	// Apply it as the activity would: re-embed the store's current
	// versions, delete the rest.
	var up []memory.VectorDoc
	for _, id := range r.Upsert {
		m, err := store.Memory(ctx, "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		up = append(up, memory.VectorDocOf(m, vec))
	}
	if err := index.Upsert(ctx, memory.CollectionMemories, up); err != nil {
		t.Fatal(err)
	}
	if err := index.Delete(ctx, memory.CollectionMemories, "acme", r.Delete); err != nil {
		t.Fatal(err)
	}
	if again := plan(); !again.Empty() {
		t.Errorf("after applying the plan: %+v", again)
	}
}

func TestReconcileMemoriesUsesTheLatestVersion(t *testing.T) {
	store := []memory.Memory{mem("a", 2, memory.StatusArchived, t1), mem("a", 1, memory.StatusLive, t1.Add(-time.Hour))}
	index := []memory.VectorDoc{memory.VectorDocOf(store[1], nil)}
	r, err := ReconcileMemories("acme", store, index)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, Reconciliation{Delete: []string{"a"}, Unindexed: 1}) {
		t.Errorf("an archived memory whose old live version is indexed: %+v", r)
	}
}

func TestReconcileEpisodes(t *testing.T) {
	ep := func(id string, status memory.EpisodeStatus) memory.Episode {
		return memory.Episode{ID: id, Tenant: "acme", TaskType: "coding", Status: status, EndedAt: t1, CreatedAt: t1}
	}
	live, archived, summary := ep("ep_live", memory.EpisodeLive), ep("ep_old", memory.EpisodeCold), ep("ep_sum_1", memory.EpisodeSummary)
	wasLive := archived
	wasLive.Status = memory.EpisodeLive
	index := []memory.VectorDoc{
		memory.EpisodeVectorDoc(live, nil),
		memory.EpisodeVectorDoc(wasLive, nil), // archived since it was indexed
		memory.EpisodeVectorDoc(ep("ep_purged", memory.EpisodeLive), nil),
	}
	r, err := ReconcileEpisodes("acme", []memory.Episode{live, archived, summary}, index)
	if err != nil {
		t.Fatal(err)
	}
	want := Reconciliation{Upsert: []string{"ep_old", "ep_sum_1"}, Delete: []string{"ep_purged"}, Missing: 1, Stale: 1, Extra: 1}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("plan\n got %+v\nwant %+v", r, want)
	}
}

func TestReconcileRefusesOtherTenants(t *testing.T) {
	other := mem("x", 1, memory.StatusLive, t1)
	other.Tenant = "globex"
	doc := memory.VectorDocOf(other, nil)
	cases := map[string]error{}
	_, cases["memory row"] = ReconcileMemories("acme", []memory.Memory{other}, nil)
	_, cases["memory doc"] = ReconcileMemories("acme", nil, []memory.VectorDoc{doc})
	_, cases["episode row"] = ReconcileEpisodes("acme", []memory.Episode{{ID: "e", Tenant: "globex"}}, nil)
	_, cases["episode doc"] = ReconcileEpisodes("acme", nil, []memory.VectorDoc{doc})
	_, cases["bad tenant"] = ReconcileMemories("", nil, nil)
	for name, err := range cases {
		if !memory.IsInvalid(err) || (name != "bad tenant" && !strings.Contains(err.Error(), `"globex"`)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
