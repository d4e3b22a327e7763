package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/hindsight-memory/hindsight/memory"
)

// Generations gives the reindex activities the vector index generations
// of this worker (app.Runtime).
type Generations interface {
	// Target is the generation a reindex fills: the next one during a
	// change of embedding model, else the active one.
	Target() (name string, index memory.VectorIndex, emb memory.Embedder)
	// Activate records generation name as the one recall reads, and
	// switches this process to it.
	Activate(ctx context.Context, name string) error
	// AwaitSwitch waits until every live process reads generation name,
	// and fails after timeout naming those that do not.
	AwaitSwitch(ctx context.Context, name string, timeout time.Duration) error
}

// AwaitSwitchInput asks to wait for every process to read a generation.
type AwaitSwitchInput struct {
	Generation string        `json:"generation"`
	Timeout    time.Duration `json:"timeout"`
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

// AwaitGenerationSwitch waits until every live process has switched to a
// generation just activated. Processes that have not switched by the
// timeout fail it, non-retryably, with an error that names them and what
// they report: waiting longer would not help, and the reindex must not
// claim a switch that did not happen.
func (a *Activities) AwaitGenerationSwitch(ctx context.Context, in AwaitSwitchInput) error {
	err := a.Generations.AwaitSwitch(ctx, in.Generation, in.Timeout)
	if err != nil && ctx.Err() == nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrGenerationSwitch, err)
	}
	return err
}

// ErrGenerationSwitch is the error type of processes that did not switch.
const ErrGenerationSwitch = "GENERATION_SWITCH_INCOMPLETE"

// ActivateGeneration records a filled generation as the one recall reads.
func (a *Activities) ActivateGeneration(ctx context.Context, name string) error {
	return temporalError(a.Generations.Activate(ctx, name))
}
