package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// ConsolidateInput configures a consolidation run. Zero fields take the
// defaults.
type ConsolidateInput struct {
	// Tenant is the tenant to consolidate; empty means every tenant, each
	// in a child workflow.
	Tenant string `json:"tenant,omitempty"`
	// MinAge is how old an episode must be to be consolidated (30 days).
	MinAge time.Duration `json:"min_age,omitempty"`
	// BatchSize bounds the episodes of one activity (1000).
	BatchSize int `json:"batch_size,omitempty"`
	// Threshold is the clustering similarity; 0 means the default for the
	// embedder.
	Threshold float64 `json:"threshold,omitempty"`
	// PromoteAt is how many episodes a lesson must recur in to be
	// promoted (3).
	PromoteAt int `json:"promote_at,omitempty"`
	// HeartbeatTimeout is how soon a batch whose worker died is retried
	// elsewhere (1 minute).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
}

func (in ConsolidateInput) withDefaults() ConsolidateInput {
	if in.MinAge == 0 {
		in.MinAge = 30 * 24 * time.Hour
	}
	if in.BatchSize == 0 {
		in.BatchSize = 1000
	}
	if in.PromoteAt == 0 {
		in.PromoteAt = 3
	}
	if in.HeartbeatTimeout == 0 {
		in.HeartbeatTimeout = HeartbeatTimeout
	}
	return in
}

// ConsolidateReport counts what a run did.
type ConsolidateReport struct {
	Tenants   int      `json:"tenants"`
	Batches   int      `json:"batches"`
	Episodes  int      `json:"episodes"` // old enough to consider
	Clusters  int      `json:"clusters"`
	Summaries []string `json:"summaries"` // typical episodes written
	Archived  int      `json:"archived"`  // raw episodes moved to cold storage
	Promoted  int      `json:"promoted"`  // lessons promoted (new or strengthened)
	Reindexed int      `json:"reindexed"` // vectors repaired by reconciliation
	Removed   int      `json:"removed"`   // stray vectors deleted
}

func (r *ConsolidateReport) add(o ConsolidateReport) {
	r.Tenants += o.Tenants
	r.Batches += o.Batches
	r.Episodes += o.Episodes
	r.Clusters += o.Clusters
	r.Summaries = append(r.Summaries, o.Summaries...)
	r.Archived += o.Archived
	r.Promoted += o.Promoted
	r.Reindexed += o.Reindexed
	r.Removed += o.Removed
}

// consolidateFanOut bounds the tenants consolidated at once.
const consolidateFanOut = 4

// Consolidate is the weekly consolidation. For one tenant: episodes older
// than MinAge are batched per task type; each batch (an activity that
// heartbeats its progress, so a retry after a worker crash resumes where
// it stopped and finished batches are never redone) clusters the episodes
// by embedding similarity, writes a typical episode per cluster, moves the
// raw episodes to cold storage keeping their lineage, and proposes the
// lessons that recur; the tenant's ledger merges those, so a lesson
// already known gains sources and confidence; finally the vector index is
// reconciled with the store. Without a tenant it fans out, one child
// workflow per tenant.
func Consolidate(ctx workflow.Context, in ConsolidateInput) (ConsolidateReport, error) {
	var a *activities.Activities
	in = in.withDefaults()
	rep := ConsolidateReport{Summaries: []string{}}
	if in.Tenant == "" {
		var tenants []string
		if err := workflow.ExecuteActivity(withStoreOptions(ctx), a.ListTenants).Get(ctx, &tenants); err != nil {
			return rep, err
		}
		parent := workflow.GetInfo(ctx).WorkflowExecution.ID
		for start := 0; start < len(tenants); start += consolidateFanOut {
			var runs []workflow.ChildWorkflowFuture
			for _, t := range tenants[start:min(start+consolidateFanOut, len(tenants))] {
				child := in
				child.Tenant = t
				cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: parent + "/" + t})
				runs = append(runs, workflow.ExecuteChildWorkflow(cctx, Consolidate, child))
			}
			for _, f := range runs {
				var r ConsolidateReport
				if err := f.Get(ctx, &r); err != nil {
					return rep, err
				}
				rep.add(r)
			}
		}
		return rep, nil
	}
	if err := memory.ValidateTenant("consolidate", in.Tenant); err != nil {
		return rep, temporal.NewNonRetryableApplicationError(err.Error(), memory.EINVALID, nil)
	}
	rep.Tenants = 1
	var batches []activities.ConsolidationBatch
	plan := activities.PlanConsolidationInput{Tenant: in.Tenant, Before: workflow.Now(ctx).UTC().Add(-in.MinAge), BatchSize: in.BatchSize}
	if err := workflow.ExecuteActivity(withStoreOptions(ctx), a.PlanConsolidation, plan).Get(ctx, &batches); err != nil {
		return rep, err
	}
	batchCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    in.HeartbeatTimeout,
		RetryPolicy:         retryPolicy,
	})
	var promotions []memory.Candidate
	for _, b := range batches {
		b.Threshold, b.PromoteAt, b.Now = in.Threshold, in.PromoteAt, workflow.Now(ctx).UTC()
		var r activities.ConsolidationResult
		if err := workflow.ExecuteActivity(batchCtx, a.ConsolidateBatch, b).Get(ctx, &r); err != nil {
			return rep, err
		}
		rep.Batches++
		rep.Episodes += len(b.EpisodeIDs)
		rep.Clusters += r.Clusters
		rep.Summaries = append(rep.Summaries, r.Summaries...)
		rep.Archived += r.Archived
		promotions = append(promotions, r.Promotions...)
	}
	if len(promotions) > 0 {
		info := workflow.GetInfo(ctx)
		reply, err := callLedger(ctx, ledger.Request{
			ID: "promote/" + info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID, Tenant: in.Tenant,
			Op: ledger.OpMerge, ReplyTo: info.WorkflowExecution.ID, WorkflowID: info.WorkflowExecution.ID,
			Candidates: promotions,
		})
		if err != nil {
			return rep, err
		}
		for _, d := range reply.Decisions {
			if len(d.After) > 0 {
				rep.Promoted++
			}
		}
	}
	var rec activities.ReconcileReport
	if err := workflow.ExecuteActivity(batchCtx, a.ReconcileIndex, in.Tenant).Get(ctx, &rec); err != nil {
		return rep, err
	}
	rep.Reindexed, rep.Removed = rec.Reindexed, rec.Removed
	return rep, nil
}
