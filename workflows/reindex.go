package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
)

// ReindexInput names the vector index generation to fill; empty means the
// workers' target (the generation of their configured embedder).
type ReindexInput struct {
	Generation string `json:"generation,omitempty"`
}

// ReindexReport says what a reindex did.
type ReindexReport struct {
	Generation string `json:"generation"`
	Tenants    int    `json:"tenants"`
	Reindexed  int    `json:"reindexed"` // documents embedded into the generation
	Removed    int    `json:"removed"`
	CaughtUp   int    `json:"caught_up"` // written by later passes: changes made meanwhile
}

// ReindexWorkflowID is the ID of the reindex into a generation.
func ReindexWorkflowID(generation string) string { return "reindex/" + generation }

// switchSettle is how long a reindex waits after recording the new
// generation for every process to switch (they poll every 5 seconds).
const switchSettle = 12 * time.Second

// Reindex fills a vector index generation from the store when the
// embedding model or its dimension changes, then switches recall over to
// it, without downtime: recall keeps reading the old generation while the
// new one fills; a second pass catches up with what changed meanwhile;
// the new generation is recorded, every process switches at its next
// poll, and a last pass, after they have, catches up with writes made
// around the switch. Each pass per tenant is an idempotent activity that
// writes only what the generation lacks, so a retry or a rerun is cheap.
func Reindex(ctx workflow.Context, in ReindexInput) (ReindexReport, error) {
	var a *activities.Activities
	rep := ReindexReport{Generation: in.Generation}
	storeCtx := withStoreOptions(ctx)
	if rep.Generation == "" {
		if err := workflow.ExecuteActivity(storeCtx, a.ReindexTarget).Get(ctx, &rep.Generation); err != nil {
			return rep, err
		}
	}
	var tenants []string
	if err := workflow.ExecuteActivity(storeCtx, a.ListTenants).Get(ctx, &tenants); err != nil {
		return rep, err
	}
	rep.Tenants = len(tenants)
	passCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 6 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         retryPolicy,
	})
	pass := func(into *int, removed *int) error {
		for _, t := range tenants {
			var r activities.ReconcileReport
			err := workflow.ExecuteActivity(passCtx, a.ReindexTenant, activities.ReindexTenantInput{Tenant: t, Generation: rep.Generation}).Get(ctx, &r)
			if err != nil {
				return err
			}
			*into += r.Reindexed
			if removed != nil {
				*removed += r.Removed
			}
		}
		return nil
	}
	if err := pass(&rep.Reindexed, &rep.Removed); err != nil {
		return rep, err
	}
	if err := pass(&rep.CaughtUp, nil); err != nil {
		return rep, err
	}
	if err := workflow.ExecuteActivity(storeCtx, a.ActivateGeneration, rep.Generation).Get(ctx, nil); err != nil {
		return rep, err
	}
	if err := workflow.Sleep(ctx, switchSettle); err != nil {
		return rep, err
	}
	if err := pass(&rep.CaughtUp, nil); err != nil {
		return rep, err
	}
	return rep, nil
}
