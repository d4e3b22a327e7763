package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

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

// forgetParts splits what a forget deletes and rebuilds into parts of at
// most n memories each, deletions first; there is always one part.
func forgetParts(memories, rebuild []string, n int) [][2][]string {
	var parts [][2][]string
	for len(memories) > 0 || len(rebuild) > 0 || len(parts) == 0 {
		var part [2][]string
		take := min(n, len(memories))
		part[0], memories = memories[:take:take], memories[take:]
		take = min(n-len(part[0]), len(rebuild))
		part[1], rebuild = rebuild[:take:take], rebuild[take:]
		parts = append(parts, part)
	}
	return parts
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

	// Memories first, through the ledger. Forgets begun since
	// "forget-parts" send at most ledger.MaxForgetIDs memories a request,
	// so that no request or reply outgrows the ledger's payloads.
	if plan.All || len(plan.Memories) > 0 || len(plan.Rebuild) > 0 {
		info := workflow.GetInfo(ctx)
		base := "forget/" + info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID
		parts := [][2][]string{{plan.Memories, plan.Rebuild}}
		if workflow.GetVersion(ctx, "forget-parts", workflow.DefaultVersion, 1) != workflow.DefaultVersion {
			parts = forgetParts(plan.Memories, plan.Rebuild, ledger.MaxForgetIDs)
		}
		for i, part := range parts {
			req := ledger.Request{
				ID: base, Tenant: in.Tenant,
				Op: ledger.OpForget, ReplyTo: info.WorkflowExecution.ID, WorkflowID: info.WorkflowExecution.ID,
				MemoryIDs: part[0], Rebuild: part[1], All: plan.All && i == 0,
			}
			if i > 0 {
				req.ID = fmt.Sprintf("%s/part-%d", base, i)
			}
			if len(req.Rebuild) > 0 {
				req.DropSources = plan.Episodes
			}
			reply, err := callLedger(ctx, req)
			if err != nil {
				return receipt, err
			}
			if reply.Forgotten != nil {
				receipt.Add(*reply.Forgotten)
			}
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
	receipt.Cap(ledger.MaxReceiptIDs)
	return receipt, nil
}
