package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// ForgetWorkflowID is the ID of the Forget workflow for in: the same
// request always maps to the same workflow.
func ForgetWorkflowID(in ledger.ForgetInput) string {
	raw, _ := json.Marshal(in)
	sum := sha256.Sum256(raw)
	return "forget/" + in.Tenant + "/" + hex.EncodeToString(sum[:8])
}

// Forget deletes what a user asked to forget — memories, sessions, a
// user's sessions or a whole tenant — and everything derived from it, in
// both stores, following lineage: sessions → events and episodes →
// memories (deleted when every source is forgotten, rebuilt without the
// forgotten sources otherwise) → typical episodes. Memory changes go
// through the tenant's ledger, so no merge can resurrect what is being
// forgotten. Every step is idempotent, so the workflow survives worker
// restarts. It returns a receipt with counts per store.
func Forget(ctx workflow.Context, in ledger.ForgetInput) (ledger.ForgetReceipt, error) {
	var a *activities.Activities
	var receipt ledger.ForgetReceipt
	if err := in.Validate(); err != nil {
		return receipt, temporal.NewNonRetryableApplicationError(memory.ErrorMessage(err), memory.EINVALID, nil)
	}
	var plan activities.ForgetPlan
	if err := workflow.ExecuteActivity(withModelOptions(ctx), a.ResolveForget, in).Get(ctx, &plan); err != nil {
		return receipt, err
	}

	// Memories first, through the ledger.
	if plan.All || len(plan.Memories) > 0 || len(plan.Rebuild) > 0 {
		info := workflow.GetInfo(ctx)
		reply, err := callLedger(ctx, ledger.Request{
			ID: "forget/" + info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID, Tenant: in.Tenant,
			Op: ledger.OpForget, ReplyTo: info.WorkflowExecution.ID, WorkflowID: info.WorkflowExecution.ID,
			MemoryIDs: plan.Memories, Rebuild: plan.Rebuild, DropSources: plan.Episodes, All: plan.All,
		})
		if err != nil {
			return receipt, err
		}
		if reply.Forgotten != nil {
			receipt.Add(*reply.Forgotten)
		}
	}

	// Then the raw events and episodes, and their vectors.
	var episodic ledger.ForgetReceipt
	if err := workflow.ExecuteActivity(withModelOptions(ctx), a.PurgeEpisodic, plan).Get(ctx, &episodic); err != nil {
		return receipt, err
	}
	receipt.Add(episodic)

	// Then the typical episodes that stood for forgotten ones.
	if len(plan.Summaries) > 0 {
		var sums ledger.ForgetReceipt
		if err := workflow.ExecuteActivity(withModelOptions(ctx), a.RebuildSummaries, plan).Get(ctx, &sums); err != nil {
			return receipt, err
		}
		receipt.Add(sums)
	}
	if receipt.Memories == nil {
		receipt.Memories = []string{}
	}
	receipt.Private = plan.Private
	return receipt, nil
}
