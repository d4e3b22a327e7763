package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
)

// DecayInput configures a decay sweep: one tenant, or every tenant when
// Tenant is empty.
type DecayInput struct {
	Tenant string `json:"tenant,omitempty"`
}

// DecayReport counts what a sweep changed.
type DecayReport struct {
	Tenants int            `json:"tenants"`
	Changed int            `json:"changed"`
	ByTo    map[string]int `json:"by_status"` // new status → memories
}

// Decay moves memories between live, cold and archived by their decay
// score (computed from timestamps, so a sweep that runs twice, late or
// never agrees with one on time) through each tenant's ledger, so it never
// races a merge.
func Decay(ctx workflow.Context, in DecayInput) (DecayReport, error) {
	var a *activities.Activities
	rep := DecayReport{ByTo: map[string]int{}}
	tenants := []string{in.Tenant}
	if in.Tenant == "" {
		if err := workflow.ExecuteActivity(withStoreOptions(ctx), a.ListTenants).Get(ctx, &tenants); err != nil {
			return rep, err
		}
	}
	info := workflow.GetInfo(ctx)
	for _, t := range tenants {
		reply, err := callLedger(ctx, activities.LedgerRequest{
			ID: "decay/" + info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + t, Tenant: t,
			Op: activities.OpDecay, ReplyTo: info.WorkflowExecution.ID, WorkflowID: info.WorkflowExecution.ID,
		})
		if err != nil {
			return rep, err
		}
		rep.Tenants++
		for _, d := range reply.Decisions {
			for _, m := range d.After {
				rep.Changed++
				rep.ByTo[string(m.Status)]++
			}
		}
	}
	return rep, nil
}
