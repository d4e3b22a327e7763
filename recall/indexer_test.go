package recall

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/index"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

func TestIndexerIdempotent(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{NoUsage: true})
	m := mem("acme", "m1", "rotate the API keys every 90 days", time.Hour)
	e.write(t, m)
	e.write(t, m) // a retried activity
	if n := e.emb.texts.Load(); n != 1 {
		t.Fatalf("writing the same version twice embedded %d texts, want 1", n)
	}
	hist, err := e.store.History(ctx, "acme", "m1")
	if err != nil || len(hist) != 1 {
		t.Fatalf("History = %d versions, %v; want 1", len(hist), err)
	}
	docs, err := e.index.List(ctx, memory.CollectionMemories, memory.VectorFilter{Tenant: "acme"}, "", 0)
	if err != nil || len(docs) != 1 {
		t.Fatalf("vectors holds %d docs, %v; want 1", len(docs), err)
	}
	if got := ids(e.recall(t, memory.Query{Tenant: "acme", Text: "API keys"})); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("recall after a retried write = %q", got)
	}
}

func TestIndexerEmbedsOnlyChangedText(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{NoUsage: true})
	v1 := mem("acme", "m1", "rotate the API keys every 90 days", time.Hour)
	e.write(t, v1)

	// A new version with the same text (a duplicate merge raised its
	// confidence): the stored vector is reused.
	v2 := v1
	v2.Version, v2.Confidence, v2.UpdatedAt = 2, 0.8, v1.UpdatedAt.Add(time.Minute)
	e.write(t, v2)
	if n := e.emb.texts.Load(); n != 1 {
		t.Fatalf("a version with unchanged text embedded again (%d texts)", n)
	}
	docs, _ := e.index.Get(ctx, memory.CollectionMemories, "acme", []string{"m1"})
	if len(docs) != 1 || docs[0].Confidence != 0.8 || !docs[0].UpdatedAt.Equal(v2.UpdatedAt) || len(docs[0].Vector) != 64 {
		t.Fatalf("vector doc after v2 = %+v, want v2's fields with the old vector", docs)
	}

	// A refinement changes the text: embedded again, and recall finds the
	// new words.
	v3 := v2
	v3.Version, v3.Content, v3.UpdatedAt = 3, "rotate the API keys every 30 days and after each incident", v2.UpdatedAt.Add(time.Minute)
	e.write(t, v3)
	if n := e.emb.texts.Load(); n != 2 {
		t.Fatalf("a version with new text embedded %d texts in all, want 2", n)
	}
	r := e.recall(t, memory.Query{Tenant: "acme", Text: "incident"})
	if len(r.Results) != 1 || r.Results[0].Memory.Version != 3 {
		t.Fatalf("recall after a refinement = %+v, want version 3", r.Results)
	}

	// Older versions arriving late change nothing.
	e.write(t, v1)
	r = e.recall(t, memory.Query{Tenant: "acme", Text: "incident"})
	if len(r.Results) != 1 || r.Results[0].Memory.Version != 3 {
		t.Fatalf("a late older version replaced the current one in recall: %+v", r.Results)
	}
}

func TestIndexerRejectsInvalid(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true})
	bad := mem("acme", "m1", "x", 0)
	bad.Kind = "memo"
	err := e.indexer.Write(context.Background(), []memory.Memory{mem("acme", "ok", "y", 0), bad})
	if !memory.IsInvalid(err) {
		t.Fatalf("Write with an invalid kind = %v, want EINVALID", err)
	}
	if ms, _ := e.store.Memories(context.Background(), memory.MemoryFilter{Tenant: "acme"}); len(ms) != 0 {
		t.Fatalf("a rejected batch stored %d memories", len(ms))
	}
}

func TestIndexerRemove(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{NoUsage: true})
	e.write(t, mem("acme", "m1", "deploy with blue green", 0), mem("acme", "m2", "deploy on tuesdays", 0))
	e.recall(t, memory.Query{Tenant: "acme", Text: "deploy"}) // load the cache
	if err := e.indexer.Remove(ctx, "acme", []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(e.recall(t, memory.Query{Tenant: "acme", Text: "deploy"})); !slices.Equal(got, []string{"m2"}) {
		t.Fatalf("after Remove recall = %q, want [m2]", got)
	}
}

func TestCatchUpAcrossEngines(t *testing.T) {
	ctx := context.Background()
	store, vectors := memory.NewMemStore(), memory.NewMemIndex(64)
	writer := newEnvOver(t, Config{NoUsage: true}, store, vectors)
	// The reader refreshes only when told to.
	reader := newEnvOver(t, Config{NoUsage: true, RefreshInterval: time.Hour}, store, vectors)

	first := mem("acme", "m1", "the staging database is postgres 16", time.Hour)
	writer.write(t, first)
	if got := ids(reader.recall(t, memory.Query{Tenant: "acme", Text: "staging database"})); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("a fresh reader loads from the store: got %q", got)
	}

	// A write with the same timestamp as the reader's watermark, and a new
	// version of m1: both are seen after Refresh, once.
	second := mem("acme", "m2", "the staging database runs on port 5433", time.Hour)
	v2 := first
	v2.Version, v2.Content, v2.UpdatedAt = 2, "the staging database is postgres 17", first.UpdatedAt
	writer.write(t, second, v2)
	cached := func(id string) int {
		c := reader.engine.tenant("acme")
		c.mu.RLock()
		defer c.mu.RUnlock()
		return c.versions[id]
	}
	if v := cached("m1"); v != 1 {
		t.Fatalf("the reader's cache holds version %d of m1 before catching up; the test proves nothing", v)
	}
	if err := reader.engine.Refresh(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if cached("m1") != 2 || cached("m2") != 1 {
		t.Fatalf("after Refresh the reader's cache holds m1 v%d and m2 v%d, want v2 and v1", cached("m1"), cached("m2"))
	}
	r := reader.recall(t, memory.Query{Tenant: "acme", Text: "staging database"})
	got := ids(r)
	slices.Sort(got)
	if !slices.Equal(got, []string{"m1", "m2"}) {
		t.Fatalf("after Refresh the reader sees %q, want m1 and m2", got)
	}
	for _, res := range r.Results {
		if res.Memory.ID == "m1" && res.Memory.Content != v2.Content {
			t.Fatalf("the reader kept m1 version %d", res.Memory.Version)
		}
	}
	// Refresh again: nothing is duplicated.
	if err := reader.engine.Refresh(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if n := len(reader.recall(t, memory.Query{Tenant: "acme", Text: "staging database"}).Results); n != 2 {
		t.Fatalf("a second Refresh left %d results, want 2", n)
	}

	// A memory archived by the other process leaves the reader's recall.
	arch := second
	arch.Version, arch.Status, arch.UpdatedAt = 2, memory.StatusArchived, second.UpdatedAt.Add(time.Minute)
	writer.write(t, arch)
	if err := reader.engine.Refresh(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if got := ids(reader.recall(t, memory.Query{Tenant: "acme", Text: "staging database"})); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("after archiving m2 elsewhere the reader sees %q", got)
	}
}

func TestVectorHitMissingFromCacheIsFetched(t *testing.T) {
	store, vectors := memory.NewMemStore(), memory.NewMemIndex(64)
	reader := newEnvOver(t, Config{NoUsage: true, RefreshInterval: time.Hour}, store, vectors)
	reader.recall(t, memory.Query{Tenant: "acme", Text: "warm up"}) // cache loaded, empty
	// Another process writes; the reader is not told.
	other, err := index.New(index.Deps{Memories: store, Index: vectors, Embedder: &wordEmbedder{dim: 64}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Write(context.Background(), []memory.Memory{mem("acme", "m1", "kubernetes upgrade checklist", 0)}); err != nil {
		t.Fatal(err)
	}
	if got := ids(reader.recall(t, memory.Query{Tenant: "acme", Text: "kubernetes upgrade"})); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("a vector hit unknown to the cache should be read from the store, got %q", got)
	}
}

func TestInvalidateAfterPurge(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{NoUsage: true})
	e.write(t, mem("acme", "m1", "invoice numbering starts at 1000", 0))
	e.recall(t, memory.Query{Tenant: "acme", Text: "invoice"})
	if _, err := e.store.Purge(ctx, memory.PurgeRequest{Tenant: "acme", MemoryIDs: []string{"m1"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.index.Delete(ctx, memory.CollectionMemories, "acme", []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	e.engine.Invalidate("acme")
	if got := ids(e.recall(t, memory.Query{Tenant: "acme", Text: "invoice"})); len(got) != 0 {
		t.Fatalf("a purged memory is still recalled after Invalidate: %q", got)
	}
}

func TestTenantEviction(t *testing.T) {
	e := newEnv(t, Config{NoUsage: true, MaxTenants: 2})
	for _, tenant := range []string{"a", "b", "c"} {
		e.write(t, mem(tenant, "m-"+tenant, "shared words for "+tenant, 0))
		if got := ids(e.recall(t, memory.Query{Tenant: tenant, Text: "shared words"})); !slices.Equal(got, []string{"m-" + tenant}) {
			t.Fatalf("tenant %s recalls %q", tenant, got)
		}
	}
	e.engine.mu.Lock()
	n, hasA := len(e.engine.tenants), e.engine.tenants["a"] != nil
	e.engine.mu.Unlock()
	if n != 2 || hasA {
		t.Fatalf("with MaxTenants 2, %d caches are kept (a kept: %v), want 2 without a", n, hasA)
	}
	// The evicted tenant rebuilds on its next recall.
	if got := ids(e.recall(t, memory.Query{Tenant: "a", Text: "shared words"})); !slices.Equal(got, []string{"m-a"}) {
		t.Fatalf("evicted tenant a recalls %q after rebuilding", got)
	}
}

func TestVectorHitUnknownToStoreIsSkipped(t *testing.T) {
	ctx := context.Background()
	store := storetest.NewCountingStore(memory.NewMemStore())
	vectors := memory.NewMemIndex(64)
	emb := &wordEmbedder{dim: 64}
	eng, err := New(Config{NoUsage: true}, Deps{Memories: store, Index: vectors, Embedder: emb, Clock: fixedClock(base)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	// The index holds a document the store never had (a purge the index
	// has not caught up with).
	vecs, _ := emb.Embed(ctx, []string{"orphaned vector about kafka"})
	if err := vectors.Upsert(ctx, memory.CollectionMemories, []memory.VectorDoc{memory.VectorDocOf(mem("acme", "ghost", "", 0), vecs[0])}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, err := eng.Recall(ctx, memory.Query{Tenant: "acme", Text: "kafka"})
		if err != nil || len(r.Results) != 0 {
			t.Fatalf("recall = %v, %v; want nothing", ids(r), err)
		}
	}
	if n := store.ReadsByID(); n != 1 {
		t.Fatalf("the store was asked %d times for the orphan, want once", n)
	}
}
