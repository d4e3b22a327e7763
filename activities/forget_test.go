package activities_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// failingIndexer fails Remove once, as a lost connection to Milvus would.
type failingIndexer struct {
	activities.Indexer
	fail bool
}

func (f *failingIndexer) Remove(ctx context.Context, tenant string, ids []string) error {
	if f.fail {
		f.fail = false
		return errors.New("milvus: connection reset")
	}
	return f.Indexer.Remove(ctx, tenant, ids)
}

// failingStore fails PutMemories once (the tombstone), after Purge.
type failingStore struct {
	memory.EpisodicStore
	fail bool
}

func (f *failingStore) PutMemories(ctx context.Context, ms []memory.Memory) error {
	if f.fail {
		f.fail = false
		return errors.New("clickhouse: timeout")
	}
	return f.EpisodicStore.PutMemories(ctx, ms)
}

// TestForgetResumesAfterAFailure fails forget at each step after the purge
// and retries it, as Temporal does: the retry finishes the job, and the
// memory is gone from the store (a content-free tombstone is left), from
// the index and from recall.
func TestForgetResumesAfterAFailure(t *testing.T) {
	for _, step := range []string{"tombstone", "vectors"} {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			d := run[memory.Decision](t, f, f.acts.PlanMerge, activities.PlanMergeInput{Tenant: "acme", RequestID: "r", EpisodeID: "ep1", Now: now,
				Candidate: memory.Candidate{Kind: memory.KindFact, Content: "The door code of the Leith office is 4417."}})
			run[memory.Decision](t, f, f.acts.ApplyDecision, d)
			id := d.After[0].ID
			store, indexer := &failingStore{EpisodicStore: f.acts.Store}, &failingIndexer{Indexer: f.acts.Indexer}
			f.acts.Store, f.acts.Indexer = store, indexer
			store.fail, indexer.fail = step == "tombstone", step == "vectors"

			req := ledger.Request{ID: "forget/1", Tenant: "acme", Op: ledger.OpForget, MemoryIDs: []string{id}}
			if _, err := f.env.ExecuteActivity(f.acts.ForgetMemories, req); err == nil {
				t.Fatal("the injected failure did not fail the first attempt")
			}
			receipt := run[ledger.ForgetReceipt](t, f, f.acts.ForgetMemories, req)
			if len(receipt.Memories) != 1 || receipt.Memories[0] != id {
				t.Fatalf("the retry's receipt = %+v", receipt)
			}
			m, err := f.store.Memory(ctx, "acme", id)
			if err != nil || m.Status != memory.StatusForgotten || m.Content != "" {
				t.Fatalf("the store holds %+v, %v; want a content-free tombstone", m, err)
			}
			if docs, _ := f.index.Get(ctx, memory.CollectionMemories, "acme", []string{id}); len(docs) != 0 {
				t.Fatalf("the index still holds %+v", docs)
			}
			// A third attempt (a retry of a success) changes nothing.
			again := run[ledger.ForgetReceipt](t, f, f.acts.ForgetMemories, req)
			if again.Tombstones != 0 || again.Store.Memories != 0 {
				t.Fatalf("forgetting again did something: %+v", again)
			}
		})
	}
}
