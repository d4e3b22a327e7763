package workflows

import (
	"errors"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

const (
	// ledgerBatchBeforeContinue bounds a ledger run's history: after this
	// many requests it continues as new, carrying its queue.
	ledgerBatchBeforeContinue = 100
	// ledgerRecentReplies is how many replies a ledger remembers to answer
	// retried requests without applying them again.
	ledgerRecentReplies = 200
)

// MemoryLedger is the single writer of one tenant's semantic memory. Every
// change (merges from sessions, direct stores, corrections, feedback,
// undos, forgets, decay) arrives as a request, by signal from workflows or
// by update from clients, and is applied one at a time, in arrival order.
// Serialising per tenant is what makes concurrent sessions safe: a merge
// reads the current versions, decides, and writes, with no other writer in
// between. ApplyDecision also checks versions optimistically, as a guard.
func MemoryLedger(ctx workflow.Context, st ledger.State) error {
	l := &ledgerRun{state: st, done: map[string]ledger.Reply{}}
	for _, r := range st.Recent {
		l.done[r.RequestID] = r
	}
	for _, c := range st.Carried {
		l.finish(c.Reply(st.Tenant)) // carried on again, up to ledgerRecentReplies
	}
	l.state.Recent, l.state.Carried = nil, nil
	logger := workflow.GetLogger(ctx)

	requests := workflow.GetSignalChannel(ctx, ledger.SignalRequest)
	err := workflow.SetUpdateHandlerWithOptions(ctx, ledger.UpdateApply,
		func(ctx workflow.Context, req ledger.Request) (ledger.Reply, error) {
			_, repeat := l.done[req.ID]
			l.enqueue(req)
			if err := workflow.Await(ctx, func() bool { _, ok := l.done[req.ID]; return ok }); err != nil {
				return ledger.Reply{}, err
			}
			reply := l.done[req.ID]
			reply.Repeat = repeat
			return reply, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req ledger.Request) error {
			if req.Tenant != st.Tenant {
				return temporal.NewApplicationError("request for tenant "+req.Tenant+" sent to the ledger of "+st.Tenant, memory.EINVALID)
			}
			return req.Validate()
		}})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, ledger.UpdateApplyBatch,
		func(ctx workflow.Context, reqs []ledger.Request) ([]ledger.Reply, error) {
			repeat := make([]bool, len(reqs))
			for i, req := range reqs {
				_, repeat[i] = l.done[req.ID]
				l.enqueue(req)
			}
			answered := func() bool {
				for _, req := range reqs {
					if _, ok := l.done[req.ID]; !ok {
						return false
					}
				}
				return true
			}
			if err := workflow.Await(ctx, answered); err != nil {
				return nil, err
			}
			replies := make([]ledger.Reply, len(reqs))
			for i, req := range reqs {
				replies[i] = l.done[req.ID]
				replies[i].Repeat = repeat[i]
			}
			return replies, nil
		},
		// An invalid request gets an error reply of its own (applyRequest
		// validates each); only a batch that is not for this ledger, or
		// empty, is refused whole.
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, reqs []ledger.Request) error {
			if len(reqs) == 0 {
				return temporal.NewApplicationError("empty batch", memory.EINVALID)
			}
			for _, req := range reqs {
				if req.Tenant != st.Tenant || req.ID == "" {
					return temporal.NewApplicationError("request "+req.ID+" for tenant "+req.Tenant+" sent to the ledger of "+st.Tenant, memory.EINVALID)
				}
			}
			return nil
		}})
	if err != nil {
		return err
	}

	processed := 0
	for {
		l.drain(requests)
		if len(l.state.Pending) == 0 {
			hasWork := func() bool { return len(l.state.Pending) > 0 || requests.Len() > 0 }
			if processed < ledgerBatchBeforeContinue && !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
				if err := workflow.Await(ctx, hasWork); err != nil {
					return err
				}
				continue
			}
			// Time to hand over: first let running update handlers return.
			if err := workflow.Await(ctx, func() bool { return hasWork() || workflow.AllHandlersFinished(ctx) }); err != nil {
				return err
			}
			if !hasWork() {
				break
			}
			continue
		}
		req := l.state.Pending[0]
		l.state.Pending = l.state.Pending[1:]
		reply := boundReply(applyRequest(ctx, req))
		l.finish(reply)
		processed++
		if req.ReplyTo != "" {
			err := workflow.SignalExternalWorkflow(ctx, req.ReplyTo, "", ledger.SignalReply, reply).Get(ctx, nil)
			if err != nil {
				// The requester is gone; its reply stays in Recent for a rerun.
				logger.Warn("ledger reply not delivered", "request", req.ID, "to", req.ReplyTo, "error", err)
			}
		}
	}
	return workflow.NewContinueAsNewError(ctx, MemoryLedger, l.carry())
}

type ledgerRun struct {
	state ledger.State
	done  map[string]ledger.Reply
	order []string // request IDs in done, oldest first
}

// enqueue queues a request unless it is queued or answered already.
func (l *ledgerRun) enqueue(req ledger.Request) {
	if _, ok := l.done[req.ID]; ok {
		return
	}
	if slices.ContainsFunc(l.state.Pending, func(p ledger.Request) bool { return p.ID == req.ID }) {
		return
	}
	l.state.Pending = append(l.state.Pending, req)
}

func (l *ledgerRun) drain(ch workflow.ReceiveChannel) {
	for {
		var req ledger.Request
		if !ch.ReceiveAsync(&req) {
			return
		}
		l.enqueue(req)
	}
}

func (l *ledgerRun) finish(r ledger.Reply) {
	l.done[r.RequestID] = r
	l.order = append(l.order, r.RequestID)
	for len(l.order) > ledgerRecentReplies {
		delete(l.done, l.order[0])
		l.order = l.order[1:]
	}
}

// carry is the state the next run starts from: what is pending, and the
// latest replies compacted (ledger.Carry).
func (l *ledgerRun) carry() ledger.State {
	st := ledger.State{Tenant: l.state.Tenant, Pending: l.state.Pending}
	start := max(0, len(l.order)-ledgerRecentReplies)
	for _, id := range l.order[start:] {
		st.Carried = append(st.Carried, ledger.Carry(l.done[id]))
	}
	return st
}

// boundReply is the reply a request gets: its decisions without the
// states before and the neighbours considered, which the decision log
// keeps, so that it stays well under Temporal's payload limit (a request
// has at most ledger.MaxCandidatesPerRequest decisions).
func boundReply(r ledger.Reply) ledger.Reply {
	if len(r.Decisions) == 0 {
		return r
	}
	out := r
	out.Decisions = make([]memory.Decision, len(r.Decisions))
	for i, d := range r.Decisions {
		d.Before, d.Neighbors = nil, nil
		out.Decisions[i] = d
	}
	return out
}

// applyRequest runs one request's activities and turns failures that
// retrying cannot fix into an error reply, so one bad request never stalls
// the tenant's ledger.
func applyRequest(ctx workflow.Context, req ledger.Request) ledger.Reply {
	reply := ledger.Reply{RequestID: req.ID}
	if err := req.Validate(); err != nil {
		return failReply(reply, err)
	}
	var a *activities.Activities
	storeCtx := withStoreOptions(ctx)
	now := workflow.Now(ctx).UTC()
	switch req.Op {
	case ledger.OpMerge, ledger.OpStore:
		for i, c := range req.Candidates {
			if req.Op == ledger.OpMerge {
				c = ledger.ClipCandidate(c)
			}
			in := activities.PlanMergeInput{
				Tenant: req.Tenant, RequestID: req.ID, Index: i, EpisodeID: req.EpisodeID,
				WorkflowID: req.WorkflowID, Candidate: c, UserStated: req.Op == ledger.OpStore, Now: now,
			}
			d, err := planAndApply(ctx, func(ctx workflow.Context) workflow.Future {
				return workflow.ExecuteActivity(withModelOptions(ctx), a.PlanMerge, in)
			})
			if err != nil {
				return failReply(reply, err)
			}
			reply.Decisions = append(reply.Decisions, d)
		}
	case ledger.OpForget:
		var receipt ledger.ForgetReceipt
		if err := workflow.ExecuteActivity(storeCtx, a.ForgetMemories, req).Get(ctx, &receipt); err != nil {
			return failReply(reply, err)
		}
		reply.Forgotten = &receipt
		if len(req.Rebuild) == 0 {
			break
		}
		var ds []memory.Decision
		if err := workflow.ExecuteActivity(storeCtx, a.PlanChange, activities.PlanChangeInput{Request: req, Now: now}).Get(ctx, &ds); err != nil {
			return failReply(reply, err)
		}
		for _, d := range ds {
			applied, err := apply(ctx, d)
			if err != nil {
				return failReply(reply, err)
			}
			reply.Decisions = append(reply.Decisions, applied)
			receipt.Rebuilt = append(receipt.Rebuilt, applied.TargetID)
		}
		reply.Forgotten = &receipt
	case ledger.OpDecay:
		if workflow.GetVersion(ctx, "decay-paged", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			return applyChanges(ctx, req, reply, now) // a sweep begun before paging
		}
		// Page by page, carrying counts only: a sweep may move any number
		// of memories, and each decision is in the decision log.
		decayed := ledger.DecayCounts{}
		for after := ""; ; {
			var page ledger.DecayCounts
			in := activities.DecayPageInput{Tenant: req.Tenant, RequestID: req.ID, WorkflowID: req.WorkflowID, After: after, Now: now}
			if err := workflow.ExecuteActivity(storeCtx, a.DecayPage, in).Get(ctx, &page); err != nil {
				return failReply(reply, err)
			}
			decayed.Add(page)
			if after = page.Next; after == "" {
				break
			}
		}
		reply.Decayed = &decayed
	default: // correct, feedback, undo
		return applyChanges(ctx, req, reply, now)
	}
	return reply
}

// applyChanges plans a change request against the current state and
// applies its decisions.
func applyChanges(ctx workflow.Context, req ledger.Request, reply ledger.Reply, now time.Time) ledger.Reply {
	var a *activities.Activities
	var ds []memory.Decision
	in := activities.PlanChangeInput{Request: req, Now: now}
	if err := workflow.ExecuteActivity(withStoreOptions(ctx), a.PlanChange, in).Get(ctx, &ds); err != nil {
		return failReply(reply, err)
	}
	for _, d := range ds {
		applied, err := apply(ctx, d)
		if err != nil {
			return failReply(reply, err)
		}
		reply.Decisions = append(reply.Decisions, applied)
	}
	return reply
}

// planAndApply plans a decision and applies it; if the state moved between
// the two (ECONFLICT from the optimistic check), it plans once more.
func planAndApply(ctx workflow.Context, plan func(workflow.Context) workflow.Future) (memory.Decision, error) {
	var d memory.Decision
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if err = plan(ctx).Get(ctx, &d); err != nil {
			return d, err
		}
		var applied memory.Decision
		applied, err = apply(ctx, d)
		if err == nil {
			return applied, nil
		}
		if errorType(err) != memory.ECONFLICT {
			return d, err
		}
	}
	return d, err
}

func apply(ctx workflow.Context, d memory.Decision) (memory.Decision, error) {
	var a *activities.Activities
	var applied memory.Decision
	err := workflow.ExecuteActivity(withStoreOptions(ctx), a.ApplyDecision, d).Get(ctx, &applied)
	return applied, err
}

func failReply(r ledger.Reply, err error) ledger.Reply {
	r.Decisions = nil
	r.Code = errorType(err)
	if r.Code == "" {
		r.Code = memory.EINTERNAL
	}
	r.Error = rootMessage(err)
	return r
}

// errorType is the application error type (a domain code) in err's chain.
func errorType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

// rootMessage is the most specific message in err's chain: the
// application error's own message rather than Temporal's wrapping.
func rootMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	return err.Error()
}
