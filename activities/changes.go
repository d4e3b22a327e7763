package activities

import (
	"context"
	"fmt"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/plan"
)

// PlanChange plans a correct, feedback, release, undo or decay request against the
// current state. Like PlanMerge it writes nothing; decision IDs derive from
// the request ID, so planning again after a retry plans the same change.
func (a *Activities) PlanChange(ctx context.Context, in PlanChangeInput) ([]memory.Decision, error) {
	r := in.Request
	op := func(i int, key string) plan.Op {
		return plan.Op{
			DecisionID: ledger.ChangeDecisionID(r.Tenant, r.ID, i, key),
			WorkflowID: r.WorkflowID, Now: in.Now, Lifecycle: a.Merge.Lifecycle, Screener: a.Screener,
		}
	}
	var out []memory.Decision
	switch r.Op {
	case ledger.OpCorrect:
		m, err := a.Store.Memory(ctx, r.Tenant, r.MemoryIDs[0])
		if err != nil {
			return nil, temporalError(err)
		}
		var d memory.Decision
		if r.Pin != "" {
			d, err = plan.Pin(op(0, m.ID), m, r.Pin == "pin")
		} else {
			d, err = plan.Correct(op(0, m.ID), m, r.Content, r.Outdated)
		}
		if err != nil {
			return nil, temporalError(err)
		}
		out = append(out, d)
	case ledger.OpRelease:
		m, err := a.Store.Memory(ctx, r.Tenant, r.MemoryIDs[0])
		if err != nil {
			return nil, temporalError(err)
		}
		d, err := plan.Release(op(0, m.ID), m, r.Reason)
		if err != nil {
			return nil, temporalError(err)
		}
		out = append(out, d)
	case ledger.OpFeedback:
		for i, id := range r.MemoryIDs {
			m, err := a.Store.Memory(ctx, r.Tenant, id)
			if err != nil {
				return nil, temporalError(err)
			}
			d, err := plan.Feedback(op(i, id), m, r.Helped)
			if err != nil {
				return nil, temporalError(err)
			}
			out = append(out, d)
		}
	case ledger.OpUndo:
		target, err := a.Store.Decision(ctx, r.Tenant, r.DecisionID)
		if err != nil {
			return nil, temporalError(err)
		}
		if u, ok, err := a.standingUndo(ctx, target); err != nil {
			return nil, temporalError(err)
		} else if ok {
			return []memory.Decision{u}, nil // undone already: answer with that undo
		}
		current, err := a.current(ctx, r.Tenant, target.MemoryIDs(), nil)
		if err != nil {
			return nil, temporalError(err)
		}
		d, err := plan.Undo(op(0, target.ID), target, current, r.Force)
		if err != nil {
			return nil, temporalError(err)
		}
		out = append(out, d)
	case ledger.OpForget: // the rebuilds; the purge is ForgetMemories
		for i, id := range r.Rebuild {
			m, err := a.Store.Memory(ctx, r.Tenant, id)
			if memory.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, temporalError(err)
			}
			d, err := a.planDropSources(ctx, op(i, id).DecisionID, m, r.DropSources, in.Now)
			if err != nil {
				return nil, temporalError(err)
			}
			if len(d.After) > 0 {
				out = append(out, d)
			}
		}
	case ledger.OpDecay:
		ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: r.Tenant,
			Statuses: []memory.Status{memory.StatusLive, memory.StatusCold, memory.StatusArchived}})
		if err != nil {
			return nil, temporalError(err)
		}
		for i, m := range ms {
			d, err := plan.Decay(op(i, m.ID+fmt.Sprint(m.Version)), m)
			if err != nil {
				return nil, temporalError(err)
			}
			if len(d.After) > 0 { // unchanged memories need no decision
				out = append(out, d)
			}
		}
	default:
		return nil, temporalError(memory.Invalidf("plan change", "op %q is not planned here", r.Op))
	}
	return out, nil
}

// ApplyChange applies a correct, feedback, release or undo request in one
// step: it plans the change against the current state (PlanChange) and
// applies each decision (ApplyDecision), and answers with the ledger's
// reply, fitted to ledger.MaxPayloadBytes. A request applied before,
// however long ago, is answered from the decision log, whose decision IDs
// derive from the request (ledger.Request.DecisionIDs), marked as a
// repeat: nothing is planned or applied again.
func (a *Activities) ApplyChange(ctx context.Context, in PlanChangeInput) (ledger.Reply, error) {
	r := in.Request
	reply := ledger.Reply{RequestID: r.ID}
	if err := r.Validate(); err != nil {
		return reply, temporalError(err)
	}
	if ids := r.DecisionIDs(); len(ids) > 0 {
		logged, err := a.logged(ctx, map[string][]string{r.Tenant: ids})
		if err != nil {
			return reply, temporalError(err)
		}
		if len(logged) == len(ids) {
			for _, id := range ids {
				reply.Decisions = append(reply.Decisions, logged[id])
			}
			reply.Repeat = true
			return ledger.Fit([]ledger.Reply{reply}, ledger.MaxPayloadBytes)[0], nil
		}
	}
	ds, err := a.PlanChange(ctx, in)
	if err != nil {
		return reply, err
	}
	replayed := 0
	for _, d := range ds {
		if d.Action == memory.ActionUndo && d.Undoes != "" {
			if _, err := a.Store.Decision(ctx, d.Tenant, d.ID); err == nil {
				replayed++ // a standing undo: this request, or another, undid it before
			}
		}
		applied, err := a.ApplyDecision(ctx, d)
		if err != nil {
			return reply, err
		}
		reply.Decisions = append(reply.Decisions, applied)
	}
	reply.Repeat = len(ds) > 0 && replayed == len(ds)
	return ledger.Fit([]ledger.Reply{reply}, ledger.MaxPayloadBytes)[0], nil
}

// DecayPage applies the decay sweep to one page of a tenant's memories,
// in ID order: it plans each memory's move and applies it at once. It
// returns counts and the next page's cursor, never decisions, so no
// payload grows with the tenant; the decisions are in the decision log.
// A decision's ID derives from the request, the memory and its version,
// so a retried page applies nothing twice: a memory the failed attempt
// moved is at its new status already.
func (a *Activities) DecayPage(ctx context.Context, in DecayPageInput) (ledger.DecayCounts, error) {
	ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: in.Tenant,
		Statuses: []memory.Status{memory.StatusLive, memory.StatusCold, memory.StatusArchived},
		ByID:     true, IDAfter: in.After, Limit: DecayPageSize})
	if err != nil {
		return ledger.DecayCounts{}, temporalError(err)
	}
	out := ledger.DecayCounts{}
	for _, m := range ms {
		op := plan.Op{DecisionID: memory.DecisionID(in.Tenant, in.RequestID, 0, m.ID+"@"+fmt.Sprint(m.Version)),
			WorkflowID: in.WorkflowID, Now: in.Now, Lifecycle: a.Merge.Lifecycle}
		d, err := plan.Decay(op, m)
		if err != nil {
			return out, temporalError(err)
		}
		if len(d.After) == 0 {
			continue // unchanged memories need no decision
		}
		if _, err := a.ApplyDecision(ctx, d); err != nil {
			return out, err
		}
		out.Add(ledger.DecayCounts{Changed: 1, ByTo: map[string]int{string(d.After[0].Status): 1}})
	}
	if len(ms) == DecayPageSize {
		out.Next = ms[len(ms)-1].ID
	}
	return out, nil
}

// standingUndo returns the undo of d that is in effect, if any: an undo of
// d that was not itself undone since.
func (a *Activities) standingUndo(ctx context.Context, d memory.Decision) (memory.Decision, bool, error) {
	if len(d.After) == 0 {
		return memory.Decision{}, false, nil
	}
	ds, err := a.Store.Decisions(ctx, memory.DecisionFilter{Tenant: d.Tenant, MemoryID: d.After[0].ID})
	if err != nil {
		return memory.Decision{}, false, err
	}
	var undo memory.Decision
	found := false
	for _, x := range ds { // oldest first
		switch {
		case x.Action == memory.ActionUndo && x.Undoes == d.ID:
			undo, found = x, true
		case found && x.Action == memory.ActionUndo && x.Undoes == undo.ID:
			found = false // the undo was undone: d stands again
		}
	}
	return undo, found, nil
}

// ForgetMemories deletes memories for good: every version, their usage and
// the decisions that mention them from the store, their vectors from the
// index, and them from recall. A content-free tombstone version is left
// behind so that other processes' recall caches, which follow the store's
// change feed, drop them too. Forgetting a forgotten memory is a no-op.
func (a *Activities) ForgetMemories(ctx context.Context, r ledger.Request) (ledger.ForgetReceipt, error) {
	receipt := ledger.ForgetReceipt{Memories: []string{}}
	named := r.MemoryIDs
	if r.All {
		all, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: r.Tenant})
		if err != nil {
			return receipt, temporalError(err)
		}
		named = nil
		for _, m := range all {
			named = append(named, m.ID)
		}
	}
	current, err := a.current(ctx, r.Tenant, named, nil)
	if err != nil {
		return receipt, temporalError(err)
	}
	// What the index holds of them: a memory the store has no more but
	// the index has was purged by an attempt that failed before the end.
	indexed, err := a.Index.Get(ctx, memory.CollectionMemories, r.Tenant, named)
	if err != nil {
		return receipt, temporalError(err)
	}
	vectors := map[string]memory.VectorDoc{}
	for _, d := range indexed {
		vectors[d.ID] = d
	}
	// Every step is idempotent and a retry resumes where a failed attempt
	// stopped: purge the store, leave the tombstone (which other
	// processes' caches follow), then drop the vectors.
	var purge, unindex []string
	var tombstones []memory.Memory
	now := a.now()
	for _, id := range named {
		m, ok := current[id]
		v, hasVector := vectors[id]
		switch {
		case ok && m.Status == memory.StatusForgotten && m.Content == "":
			// Forgotten already; its vectors and this process's cache
			// entry may not be gone yet (removing them again is a no-op).
			// With vectors left, this finishes an attempt that failed.
			unindex = append(unindex, id)
			if hasVector {
				receipt.Memories = append(receipt.Memories, id)
			}
		case ok:
			purge, unindex = append(purge, id), append(unindex, id)
			tombstones = append(tombstones, plan.Tombstone(m, now))
			receipt.Memories = append(receipt.Memories, id)
		case hasVector:
			unindex = append(unindex, id)
			tombstones = append(tombstones, plan.Tombstone(memory.Memory{ID: id, Tenant: r.Tenant, Scope: v.Scope, Kind: v.Kind}, now))
			receipt.Memories = append(receipt.Memories, id)
		case len(r.MemoryIDs) == 1 && !r.All && len(r.Rebuild) == 0:
			// One memory, named by a caller: say it does not exist.
			return receipt, temporalError(memory.NotFoundf("forget", "memory %s not found", id))
		}
	}
	if len(purge) > 0 {
		if receipt.Store, err = a.Store.Purge(ctx, memory.PurgeRequest{Tenant: r.Tenant, MemoryIDs: purge}); err != nil {
			return receipt, temporalError(err)
		}
	}
	if len(tombstones) > 0 {
		if err := a.Store.PutMemories(ctx, tombstones); err != nil {
			return receipt, temporalError(err)
		}
	}
	if len(unindex) > 0 {
		if err := a.Indexer.Remove(ctx, r.Tenant, unindex); err != nil {
			return receipt, temporalError(err)
		}
	}
	receipt.Tombstones = len(tombstones)
	for _, id := range unindex {
		if _, ok := vectors[id]; ok {
			receipt.Vectors++
		}
	}
	if r.All {
		// Vectors the store no longer knows (an index not yet reconciled).
		n, err := a.deleteAllVectors(ctx, memory.CollectionMemories, r.Tenant)
		if err != nil {
			return receipt, temporalError(err)
		}
		receipt.Vectors += n
	}
	return receipt, nil
}
