package recall

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// next is a memory's next version, changed by change and written now.
func next(m memory.Memory, change func(*memory.Memory)) memory.Memory {
	m.Version++
	m.UpdatedAt = m.UpdatedAt.Add(time.Minute)
	change(&m)
	m.ContentHash = memory.ContentHash(m.Kind, m.Content)
	return m
}

// serverStore is the store as a ClickHouse server is: other processes may
// write it, so it keeps no memory.WriteCounter.
type serverStore struct{ memory.EpisodicStore }

// reader is an engine on store and index that never catches up on its own
// (RefreshInterval and MaxStaleness of an hour).
func reader(t *testing.T, store memory.EpisodicStore, vectors memory.VectorIndex, clock func() time.Time) *Engine {
	t.Helper()
	deps := Deps{Memories: store, Episodes: store, Events: store, Clock: clock}
	if vectors != nil {
		deps.Index, deps.Embedder = vectors, &wordEmbedder{dim: 64}
	}
	e, err := New(Config{NoUsage: true, RefreshInterval: time.Hour, MaxStaleness: time.Hour}, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func recallIDs(t *testing.T, e *Engine, q memory.Query) ([]string, Response) {
	t.Helper()
	q.TopK = 10
	r, err := e.Recall(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(r)
	slices.Sort(got)
	return got, r
}

// TestOtherProcessesChangesAreServedAtOnce runs two engines on one store
// and one vector index, as two replicas do, on a store only this process
// writes (counted writes) and on one other processes write too (a
// server). The reader loads its cache and never catches up on its own;
// the writer then supersedes one memory, forgets another (purge and
// tombstone, as forget does) and corrects a third. The reader's very next
// recall serves none of them as they were.
func TestOtherProcessesChangesAreServedAtOnce(t *testing.T) {
	for name, wrap := range map[string]func(*memory.MemStore) memory.EpisodicStore{
		"counted": func(s *memory.MemStore) memory.EpisodicStore { return s },
		"server":  func(s *memory.MemStore) memory.EpisodicStore { return serverStore{s} },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store, vectors := memory.NewMemStore(), memory.NewMemIndex(64)
			writer := newEnvOver(t, Config{NoUsage: true}, store, vectors)
			r := reader(t, wrap(store), vectors, fixedClock(base))

			due := mem("acme", "due", "invoices are due on the 5th of each month", time.Hour)
			email := mem("acme", "email", "invoices are sent by email to billing", time.Hour)
			currency := mem("acme", "currency", "invoices are in EUR", time.Hour)
			writer.write(t, due, email, currency)
			if got, _ := recallIDs(t, r, memory.Query{Tenant: "acme", Text: "invoices"}); len(got) != 3 {
				t.Fatalf("the reader's first recall = %q, want all three", got)
			}

			later := mem("acme", "due-10th", "invoices are due on the 10th of each month", 0)
			writer.write(t, next(due, func(m *memory.Memory) { m.Status, m.SupersededBy = memory.StatusSuperseded, later.ID }), later)
			if _, err := store.Purge(ctx, memory.PurgeRequest{Tenant: "acme", MemoryIDs: []string{email.ID}}); err != nil {
				t.Fatal(err)
			}
			tomb := memory.Memory{ID: email.ID, Tenant: "acme", Version: 2, Kind: email.Kind, Status: memory.StatusForgotten,
				CreatedAt: email.CreatedAt, UpdatedAt: base}
			if err := store.PutMemories(ctx, []memory.Memory{tomb}); err != nil {
				t.Fatal(err)
			}
			if err := writer.indexer.Remove(ctx, "acme", []string{email.ID}); err != nil {
				t.Fatal(err)
			}
			writer.write(t, next(currency, func(m *memory.Memory) { m.Content = "invoices are in USD" }))

			got, resp := recallIDs(t, r, memory.Query{Tenant: "acme", Text: "invoices"})
			if !slices.Equal(got, []string{"currency", "due-10th"}) {
				t.Fatalf("the reader's recall after the other process's changes = %q, want currency and due-10th", got)
			}
			for _, res := range resp.Results {
				if res.Memory.ID == "currency" && res.Memory.Content != "invoices are in USD" {
					t.Fatalf("the corrected memory is served as %q", res.Memory.Content)
				}
			}
			_, resp = recallIDs(t, r, memory.Query{Tenant: "acme", Text: "invoices", IncludeSuperseded: true})
			for _, res := range resp.Results {
				if res.Memory.ID == "due" && res.Memory.Status != memory.StatusSuperseded {
					t.Fatalf("asked for superseded memories, the reader serves %s as %s", res.Memory.ID, res.Memory.Status)
				}
				if res.Memory.ID == "email" {
					t.Fatal("the forgotten memory is served")
				}
			}
		})
	}
}

// TestQuietReplicaCatchesUpBeforeRanking runs a reader on a server store
// with no vector index (so only its cache can find a memory) that last
// caught up longer ago than MaxStaleness: its next recall finds a memory
// another process wrote meanwhile, rather than ranking from the old cache
// and catching up in the background for the recall after.
func TestQuietReplicaCatchesUpBeforeRanking(t *testing.T) {
	store, vectors := memory.NewMemStore(), memory.NewMemIndex(64)
	writer := newEnvOver(t, Config{NoUsage: true}, store, vectors)
	var now atomic.Int64
	now.Store(base.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	eng, err := New(Config{NoUsage: true, RefreshInterval: time.Hour, MaxStaleness: time.Minute},
		Deps{Memories: serverStore{store}, Episodes: store, Events: store, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	deploy := memory.Query{Tenant: "acme", Text: "deploy"}

	writer.write(t, mem("acme", "blue-green", "deploy with blue green", time.Hour))
	if got, _ := recallIDs(t, eng, deploy); !slices.Equal(got, []string{"blue-green"}) {
		t.Fatalf("first recall = %q", got)
	}
	writer.write(t, mem("acme", "tuesdays", "deploy on tuesdays", 0))
	if got, _ := recallIDs(t, eng, deploy); len(got) != 1 {
		t.Fatalf("within MaxStaleness the reader ranks from its cache: %q; the test proves nothing", got)
	}
	now.Add(int64(2 * time.Minute))
	if got, _ := recallIDs(t, eng, deploy); !slices.Equal(got, []string{"blue-green", "tuesdays"}) {
		t.Fatalf("past MaxStaleness the reader's recall = %q, want both memories", got)
	}
}
