package activities

import (
	"context"
	"fmt"

	"github.com/hindsight-memory/hindsight/memory"
)

// Generations gives the reindex activities the vector index generations
// of this worker (worker.Runtime).
type Generations interface {
	// Target is the generation a reindex fills: the next one during a
	// change of embedding model, else the active one.
	Target() (name string, index memory.VectorIndex, emb memory.Embedder)
	// Activate records generation name as the one recall reads, and
	// switches this process to it.
	Activate(ctx context.Context, name string) error
}

// ReindexTenantInput asks to fill a generation with one tenant's data.
type ReindexTenantInput struct {
	Tenant     string `json:"tenant"`
	Generation string `json:"generation"`
}

// ReindexTenant embeds a tenant's memories and episodes from the store
// into the target generation, writing only what it lacks or holds stale:
// run again after the first pass, it catches up with what changed in
// between. It fails (non-retryably) if this worker's target is another
// generation, e.g. after a configuration change mid-reindex.
func (a *Activities) ReindexTenant(ctx context.Context, in ReindexTenantInput) (ReconcileReport, error) {
	name, x, emb := a.Generations.Target()
	if name != in.Generation {
		return ReconcileReport{}, temporalError(memory.Invalidf("reindex",
			"this worker fills generation %s, not %s: its embedder configuration changed; start a new reindex", name, in.Generation))
	}
	rep, err := a.reconcile(ctx, in.Tenant, x, emb)
	if err != nil {
		return rep, temporalError(fmt.Errorf("reindex %s into %s: %w", in.Tenant, name, err))
	}
	return rep, nil
}

// ReindexTarget names the generation this worker's reindex fills.
func (a *Activities) ReindexTarget(ctx context.Context) (string, error) {
	name, _, _ := a.Generations.Target()
	return name, nil
}

// ActivateGeneration records a filled generation as the one recall reads.
func (a *Activities) ActivateGeneration(ctx context.Context, name string) error {
	return temporalError(a.Generations.Activate(ctx, name))
}
