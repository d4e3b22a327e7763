package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

const (
	localMergeTimeout = 2 * time.Minute
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
	l := &ledgerRun{state: st, done: map[string]ledger.Reply{}, waiting: map[string]int{}, answers: map[string]ledger.Reply{}}
	for _, r := range st.Recent {
		l.done[r.RequestID] = r
	}
	for _, c := range st.Carried {
		l.finish(c.Reply(st.Tenant)) // carried on again, up to ledgerRecentReplies
	}
	l.state.Recent, l.state.Carried = nil, nil

	// Ledgers begun since "merge-local" run merge batches as local
	// activities where that is short (below), and queue an update's
	// requests after the signals delivered before it, in arrival order.
	mergeLocal := workflow.GetVersion(ctx, "merge-local", workflow.DefaultVersion, 1) != workflow.DefaultVersion
	requests := workflow.GetSignalChannel(ctx, ledger.SignalRequest)
	err := workflow.SetUpdateHandlerWithOptions(ctx, ledger.UpdateApply,
		func(ctx workflow.Context, req ledger.Request) (ledger.Reply, error) {
			if mergeLocal {
				l.drain(requests)
			}
			replies, err := l.answer(ctx, []ledger.Request{req})
			if err != nil {
				return ledger.Reply{}, err
			}
			return replies[0], nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req ledger.Request) error {
			if req.Tenant != st.Tenant {
				return temporal.NewApplicationError("request for tenant "+memory.Quote(req.Tenant)+" sent to the ledger of "+st.Tenant, memory.EINVALID)
			}
			if err := req.Validate(); err != nil {
				return temporal.NewApplicationError(memory.ErrorMessage(err), memory.EINVALID)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, ledger.UpdateApplyBatch,
		func(ctx workflow.Context, reqs []ledger.Request) ([]ledger.Reply, error) {
			if mergeLocal {
				l.drain(requests)
			}
			replies, err := l.answer(ctx, reqs)
			if err != nil {
				return nil, err
			}
			return ledger.Fit(replies, ledger.MaxPayloadBytes), nil
		},
		// An invalid request gets an error reply of its own (applyRequest
		// validates each); only a batch that is not for this ledger, or
		// empty, is refused whole.
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, reqs []ledger.Request) error {
			if err := ledger.ValidateBatch(st.Tenant, reqs); err != nil {
				return temporal.NewApplicationError(memory.ErrorMessage(err), memory.EINVALID)
			}
			return nil
		}})
	if err != nil {
		return err
	}

	// Ledgers begun since "replies-unawaited" do not wait for their
	// replies to be delivered before the next batch: each delivery is a
	// transaction of its own on the ledger's history, and waiting for a
	// batch's made the next one wait as long.
	unawaited := workflow.GetVersion(ctx, "replies-unawaited", workflow.DefaultVersion, 1) != workflow.DefaultVersion
	// Ledgers begun since "bounded-payloads" keep every payload they send
	// within ledger.MaxPayloadBytes as encoded (merge batches are cut by
	// size as well as by candidates), and apply a change request in one
	// activity (activities.ApplyChange) that answers a request applied
	// before from the decision log.
	l.bounded = workflow.GetVersion(ctx, "bounded-payloads", workflow.DefaultVersion, 1) != workflow.DefaultVersion
	// They ask their worker whether a merge batch is a short step there
	// (no model to call) and, if so, run batches as local activities: no
	// task queue round trip, and one marker in the history instead of
	// three events and a workflow task.
	var a *activities.Activities
	local := false
	if mergeLocal {
		if err := workflow.ExecuteLocalActivity(withLocalOptions(ctx, 10*time.Second), a.MergesInProcess).Get(ctx, &local); err != nil {
			local = false // ask a worker's queue, then
		}
	}
	// Ledgers begun since "settle-failed-merges" store what a merge batch
	// that failed for good logged without storing before their next
	// request (settle).
	settling := workflow.GetVersion(ctx, "settle-failed-merges", workflow.DefaultVersion, 1) != workflow.DefaultVersion
	var delivering []workflow.Future
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
			if hasWork() {
				continue
			}
			if len(delivering) > 0 {
				// Then deliver every reply of this run. Requests that
				// arrive meanwhile are seen by the loop before the run
				// ends: a request signalled and never drained would be
				// lost with the run.
				delivering = delivered(ctx, delivering, true)
				continue
			}
			break
		}
		if settling && len(l.state.Unsettled) > 0 {
			l.settle(ctx, local)
		}
		var batch []ledger.Request
		var replies []ledger.Reply
		if merges := l.takeMerges(); len(merges) > 0 &&
			workflow.GetVersion(ctx, "merge-batched", workflow.DefaultVersion, 1) != workflow.DefaultVersion {
			var failed bool
			batch = merges
			replies, failed = mergeBatch(ctx, merges, local)
			if failed && settling {
				l.unsettle(ctx, merges)
			}
		} else {
			if len(merges) > 0 { // a ledger begun before batching: one at a time
				l.state.Pending = append(merges, l.state.Pending...)
			}
			req := l.state.Pending[0]
			l.state.Pending = l.state.Pending[1:]
			batch, replies = []ledger.Request{req}, ledger.Fit([]ledger.Reply{applyRequest(ctx, req, l.bounded)}, ledger.MaxPayloadBytes)
		}
		var sent []workflow.Future
		for i, req := range batch {
			l.finish(replies[i])
			processed++
			if req.ReplyTo != "" {
				sent = append(sent, workflow.SignalExternalWorkflow(ctx, req.ReplyTo, "", ledger.SignalReply, replies[i]))
			}
		}
		delivering = append(delivering, sent...)
		if !unawaited {
			delivering = delivered(ctx, delivering, true)
		} else {
			delivering = delivered(ctx, delivering, false)
		}
	}
	// Every reply of this run is delivered (above); the next run starts on
	// the ledgers' own queue (a ledger begun on the shared one moves).
	if q := workflow.GetInfo(ctx).TaskQueueName; ledger.TaskQueue(q) != q &&
		workflow.GetVersion(ctx, "ledger-queue", workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		ctx = workflow.WithWorkflowTaskQueue(ctx, ledger.TaskQueue(q))
	}
	return workflow.NewContinueAsNewError(ctx, MemoryLedger, l.carry())
}

// delivered settles reply deliveries: all of them with wait, else those
// already done; it returns those still under way. A reply that could not
// be delivered (the requester is gone) stays carried for a rerun.
func delivered(ctx workflow.Context, fs []workflow.Future, wait bool) []workflow.Future {
	var pending []workflow.Future
	for _, f := range fs {
		if !wait && !f.IsReady() {
			pending = append(pending, f)
			continue
		}
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("ledger reply not delivered", "error", err)
		}
	}
	return pending
}

type ledgerRun struct {
	state ledger.State
	// done holds the latest replies (ledgerRecentReplies) to answer a
	// retry without a look-up; a retry of an older request is applied
	// again, and the activities answer it from the decision log.
	done  map[string]ledger.Reply
	order []string // request IDs in done, oldest first
	// waiting counts the update handlers waiting for each request, and
	// answers keeps the replies they wait for until the last has taken
	// its own: apart from done, whose window may pass a reply on before
	// a handler wakes to read it.
	waiting map[string]int
	answers map[string]ledger.Reply
	bounded bool // since "bounded-payloads"
}

// answer queues the requests of an update and waits for a reply to each.
// A request answered before gets that reply at once; one queued already
// (a concurrent retry) waits for its reply; both are marked repeats. A
// reply the activities found in the decision log (the request was applied
// before the ledger's window) comes marked from them.
func (l *ledgerRun) answer(ctx workflow.Context, reqs []ledger.Request) ([]ledger.Reply, error) {
	replies := make([]ledger.Reply, len(reqs))
	got := make([]bool, len(reqs))
	repeat := make([]bool, len(reqs))
	for i, req := range reqs {
		if r, ok := l.done[req.ID]; ok {
			replies[i], got[i], repeat[i] = r, true, true
			continue
		}
		repeat[i] = l.queued(req.ID)
		l.enqueue(req)
		l.waiting[req.ID]++
	}
	err := workflow.Await(ctx, func() bool {
		for i, req := range reqs {
			if !got[i] {
				if _, ok := l.answers[req.ID]; !ok {
					return false
				}
			}
		}
		return true
	})
	// Every waiter leaves, answered or not (a cancelled wait).
	for i, req := range reqs {
		if got[i] {
			continue
		}
		if r, ok := l.answers[req.ID]; ok {
			replies[i] = r
		}
		if l.waiting[req.ID]--; l.waiting[req.ID] <= 0 {
			delete(l.waiting, req.ID)
			delete(l.answers, req.ID)
		}
	}
	if err != nil {
		return nil, err
	}
	for i := range replies {
		replies[i].Repeat = replies[i].Repeat || repeat[i]
	}
	return replies, nil
}

// takeMerges removes from the head of the queue the merge and store
// requests that wait there, in order, up to MaxCandidatesPerRequest
// candidates in all (at least one request), so that their replies stay in
// one bounded payload; since "bounded-payloads" also up to
// ledger.MaxPayloadBytes of requests as encoded, the batch's input.
func (l *ledgerRun) takeMerges() []ledger.Request {
	n, candidates, size := 0, 0, 0
	for _, req := range l.state.Pending {
		if req.Op != ledger.OpMerge && req.Op != ledger.OpStore {
			break
		}
		if n > 0 && candidates+len(req.Candidates) > ledger.MaxCandidatesPerRequest {
			break
		}
		if l.bounded {
			bytes := ledger.EncodedSize(req)
			if n > 0 && size+bytes > ledger.MaxPayloadBytes {
				break
			}
			size += bytes
		}
		n, candidates = n+1, candidates+len(req.Candidates)
	}
	batch := l.state.Pending[:n:n]
	l.state.Pending = l.state.Pending[n:]
	return batch
}

// mergeBatch merges consecutive merge and store requests in one activity
// (activities.MergeRequests), which makes the decisions applying them one
// by one would; if the activity fails for good, every request of the batch
// gets its error, and failed is set. With local, the activity is a local
// one.
//
// localMergeTimeout bounds a local batch: with no model to call, a batch
// of MaxCandidatesPerRequest candidates takes seconds at most.
func mergeBatch(ctx workflow.Context, reqs []ledger.Request, local bool) (replies []ledger.Reply, failed bool) {
	var a *activities.Activities
	in := activities.MergeRequestsInput{Requests: reqs, Now: workflow.Now(ctx).UTC()}
	var f workflow.Future
	if local {
		f = workflow.ExecuteLocalActivity(withLocalOptions(ctx, localMergeTimeout), a.MergeRequests, in)
	} else {
		f = workflow.ExecuteActivity(withModelOptions(ctx), a.MergeRequests, in)
	}
	err := f.Get(ctx, &replies)
	if err == nil && len(replies) == len(reqs) {
		return replies, false
	}
	if err == nil {
		err = temporal.NewApplicationError(fmt.Sprintf("the merge of %d requests answered %d", len(reqs), len(replies)), memory.EINTERNAL)
	}
	replies = make([]ledger.Reply, len(reqs))
	for i, req := range reqs {
		replies[i] = failReply(ledger.Reply{RequestID: req.ID}, err)
	}
	return replies, true
}

// unsettle notes the decisions of a merge batch that failed for good: it
// may have failed after logging them (the batch's write-ahead record)
// and before storing their versions. Until settle has stored those, a
// later decision could take their version numbers. The oldest notes go
// past ledger.MaxUnsettled, which only a store failing for that long
// reaches.
func (l *ledgerRun) unsettle(ctx workflow.Context, reqs []ledger.Request) {
	for _, req := range reqs {
		l.state.Unsettled = append(l.state.Unsettled, req.MergeDecisionIDs()...)
	}
	if over := len(l.state.Unsettled) - ledger.MaxUnsettled; over > 0 {
		workflow.GetLogger(ctx).Error("ledger: too many decisions of failed merges to settle; the oldest are dropped", "dropped", over)
		l.state.Unsettled = slices.Delete(l.state.Unsettled, 0, over)
	}
}

// settle stores the versions of the unsettled decisions that are logged
// (activities.Settle) before the ledger's next request. If it cannot, it
// tries again before the one after: a store that fails these writes fails
// the requests' own as well, and nothing else holds the ledger up.
func (l *ledgerRun) settle(ctx workflow.Context, local bool) {
	var a *activities.Activities
	in := activities.SettleInput{Tenant: l.state.Tenant, DecisionIDs: l.state.Unsettled}
	var f workflow.Future
	if local {
		f = workflow.ExecuteLocalActivity(withLocalOptions(ctx, localMergeTimeout), a.Settle, in)
	} else {
		f = workflow.ExecuteActivity(withStoreOptions(ctx), a.Settle, in)
	}
	if err := f.Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("ledger: the decisions of failed merges are not settled yet", "decisions", len(in.DecisionIDs), "error", err)
		return
	}
	l.state.Unsettled = nil
}

// enqueue queues a request unless it is queued or answered already.
func (l *ledgerRun) enqueue(req ledger.Request) {
	if _, ok := l.done[req.ID]; ok || l.queued(req.ID) {
		return
	}
	l.state.Pending = append(l.state.Pending, req)
}

// queued reports whether the request with this ID waits in the queue.
func (l *ledgerRun) queued(id string) bool {
	return slices.ContainsFunc(l.state.Pending, func(p ledger.Request) bool { return p.ID == id })
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
	if l.waiting[r.RequestID] > 0 {
		l.answers[r.RequestID] = r
	}
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
	st := ledger.State{Tenant: l.state.Tenant, Pending: l.state.Pending, Unsettled: l.state.Unsettled}
	start := max(0, len(l.order)-ledgerRecentReplies)
	for _, id := range l.order[start:] {
		st.Carried = append(st.Carried, ledger.Carry(l.done[id]))
	}
	return st
}

// applyRequest runs one request's activities and turns failures that
// retrying cannot fix into an error reply, so one bad request never stalls
// the tenant's ledger.
func applyRequest(ctx workflow.Context, req ledger.Request, bounded bool) ledger.Reply {
	reply := ledger.Reply{RequestID: req.ID}
	if err := req.Validate(); err != nil {
		return failReply(reply, err)
	}
	var a *activities.Activities
	storeCtx := withStoreOptions(ctx)
	now := workflow.Now(ctx).UTC()
	switch req.Op {
	case ledger.OpMerge, ledger.OpStore:
		for i := range req.Candidates {
			in := activities.PlanMergeInput{
				Tenant: req.Tenant, RequestID: req.ID, Index: i, EpisodeID: req.EpisodeID,
				WorkflowID: req.WorkflowID, Candidate: req.Merged(i), UserStated: req.Op == ledger.OpStore, Now: now,
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
	default: // correct, feedback, undo, release
		if bounded {
			in := activities.PlanChangeInput{Request: req, Now: now}
			if err := workflow.ExecuteActivity(storeCtx, a.ApplyChange, in).Get(ctx, &reply); err != nil {
				return failReply(ledger.Reply{RequestID: req.ID}, err)
			}
			return reply
		}
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
	return r.Failed(errorType(err), rootMessage(err))
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
