package workflows

import (
	"cmp"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
)

// ReindexInput names the vector index generation to fill; empty means the
// workers' target (the generation of their configured embedder).
type ReindexInput struct {
	Generation string `json:"generation,omitempty"`
	// SwitchTimeout bounds the wait for every process to switch to the
	// generation once it is recorded (DefaultSwitchTimeout).
	SwitchTimeout time.Duration `json:"switch_timeout,omitempty"`
}

// DefaultSwitchTimeout is how long a reindex waits for every live process
// to switch: they poll every 5 s, and a process that died is known to be
// gone after about a minute.
const DefaultSwitchTimeout = 2 * time.Minute

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

// switchSettle is how long reindexes started before processes
// acknowledged a switch waited instead (replay only).
const switchSettle = 12 * time.Second

// Reindex fills a vector index generation from the store when the
// embedding model or its dimension changes, then switches recall over to
// it, without downtime: recall keeps reading the old generation while the
// new one fills; a second pass catches up with what changed meanwhile;
// the new generation is recorded, every process switches at its next
// poll and says so, and a last pass, after they all have, catches up with
// writes made around the switch. If some process does not switch in time,
// the last pass still runs and the reindex fails, naming the process. Each
// pass per tenant is an idempotent activity that writes only what the
// generation lacks, so a retry or a rerun is cheap.
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
	var switched error
	if workflow.GetVersion(ctx, "switch-acknowledged", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		if err := workflow.Sleep(ctx, switchSettle); err != nil {
			return rep, err
		}
	} else {
		timeout := cmp.Or(in.SwitchTimeout, DefaultSwitchTimeout)
		awaitCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: timeout + time.Minute,
			HeartbeatTimeout:    HeartbeatTimeout,
			RetryPolicy:         retryPolicy,
		})
		switched = workflow.ExecuteActivity(awaitCtx, a.AwaitGenerationSwitch,
			activities.AwaitSwitchInput{Generation: rep.Generation, Timeout: timeout}).Get(ctx, nil)
	}
	if err := pass(&rep.CaughtUp, nil); err != nil {
		return rep, err
	}
	return rep, switched
}
