package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
)

// SignalSessionEnd is the signal SessionEnd is started with (SignalWithStart).
// Further signals to a running SessionEnd are absorbed: a session ended twice
// is distilled once.
const SignalSessionEnd = "session-end"

// SessionEndInput starts SessionEnd. The transcript itself is in the
// episodic store; only its reference travels.
type SessionEndInput struct {
	Tenant    string `json:"tenant"`
	SessionID string `json:"session_id"`
}

// SessionEndResult is what distilling a session produced.
type SessionEndResult struct {
	EpisodeID  string            `json:"episode_id"`
	Task       string            `json:"task"`
	TaskType   string            `json:"task_type,omitempty"`
	Outcome    memory.Outcome    `json:"outcome"`
	Extractor  string            `json:"extractor"`
	Candidates int               `json:"candidates"`
	Memories   []MemoryOutcome   `json:"memories"`
	Failures   []memory.Failure  `json:"failures,omitempty"`
	Usage      memory.TokenUsage `json:"usage"`
}

// MemoryOutcome says what became of one candidate.
type MemoryOutcome struct {
	MemoryID   string         `json:"memory_id"`
	Kind       memory.Kind    `json:"kind"`
	Content    string         `json:"content"`
	Verdict    memory.Verdict `json:"verdict"`
	TargetID   string         `json:"target_id,omitempty"`
	DecisionID string         `json:"decision_id"`
	Reason     string         `json:"reason"`
}

// ledgerReplyTimeout bounds how long a session waits for its tenant's
// ledger; a ledger that far behind needs an operator, not a silent wait.
const ledgerReplyTimeout = 24 * time.Hour

// SessionEnd distils one finished session: load the transcript, extract the
// episode and candidate memories, store and index the episode, then merge
// the candidates through the tenant's ledger (which embeds and upserts
// them) and wait for its verdicts.
func SessionEnd(ctx workflow.Context, in SessionEndInput) (SessionEndResult, error) {
	var a *activities.Activities
	var res SessionEndResult
	if err := memory.ValidateTenant("session end", in.Tenant); err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), memory.EINVALID, nil)
	}

	// SignalWithStart delivered the caller's metadata; later signals
	// (the session ended again) are absorbed.
	var meta activities.SessionMeta
	workflow.GetSignalChannel(ctx, SignalSessionEnd).ReceiveAsync(&meta)
	defer absorbSignals(ctx, SignalSessionEnd)

	ref := activities.SessionRef{Tenant: in.Tenant, SessionID: in.SessionID}
	// Sessions begun since "local-steps" run their short, idempotent steps
	// as local activities (a marker in the history each, run by the
	// workflow's own worker, no task queue round trip) and need no
	// separate transcript check: extraction reads the transcript and
	// fails the same way on an empty one, and says whose session it was.
	// Since version 2 they also extract locally when the worker's
	// extractor calls no model (ExtractInProcess says so by answering).
	steps := workflow.GetVersion(ctx, "local-steps", workflow.DefaultVersion, 2)
	local := steps != workflow.DefaultVersion
	storeCtx, modelCtx := withStoreOptions(ctx), withModelOptions(ctx)
	run := workflow.ExecuteActivity
	if local {
		storeCtx, modelCtx = withLocalOptions(ctx, time.Minute), withLocalOptions(ctx, 10*time.Minute)
		run = workflow.ExecuteLocalActivity
	}
	if !local {
		var info activities.TranscriptInfo
		if err := workflow.ExecuteActivity(storeCtx, a.LoadTranscript, ref).Get(ctx, &info); err != nil {
			return res, err
		}
		if meta.UserID == "" {
			meta.UserID = info.UserID
		}
	}

	extract := activities.ExtractInput{Session: ref, Meta: meta, Now: workflow.Now(ctx).UTC()}
	var lx activities.LocalExtraction
	if steps >= 2 {
		if err := workflow.ExecuteLocalActivity(modelCtx, a.ExtractInProcess, extract).Get(ctx, &lx); err != nil {
			return res, err
		}
	}
	x := lx.Extraction
	if steps < 2 || lx.Remote {
		if err := workflow.ExecuteActivity(withModelOptions(ctx), a.ExtractEpisode, extract).Get(ctx, &x); err != nil {
			return res, err
		}
	}
	ep := x.Episode
	if meta.UserID == "" {
		meta.UserID = ep.UserID
	}
	res = SessionEndResult{
		EpisodeID: ep.ID, Task: ep.Task, TaskType: ep.TaskType, Outcome: ep.Outcome,
		Extractor: x.Model, Candidates: len(x.Candidates), Failures: ep.Failures, Usage: x.Usage,
		Memories: []MemoryOutcome{},
	}
	if err := run(storeCtx, a.StoreEpisode, ep).Get(ctx, nil); err != nil {
		return res, err
	}
	if err := run(modelCtx, a.IndexEpisode, ep).Get(ctx, nil); err != nil {
		return res, err
	}
	if len(x.Candidates) == 0 {
		return res, nil
	}

	// What is about the session's user goes to that user's scope; what
	// is about the work, to the tenant's shared space.
	for i := range x.Candidates {
		x.Candidates[i] = ledger.ClipCandidate(x.Candidates[i])
		x.Candidates[i].Scope = memory.ScopeFor(x.Candidates[i], meta.UserID)
	}
	info2 := workflow.GetInfo(ctx)
	req := ledger.Request{
		// Without the run ID: a rerun of a failed session asks for the same
		// merge, and the ledger answers it from its record.
		ID:      "merge/" + info2.WorkflowExecution.ID,
		Tenant:  in.Tenant,
		Op:      ledger.OpMerge,
		ReplyTo: info2.WorkflowExecution.ID, EpisodeID: ep.ID, WorkflowID: info2.WorkflowExecution.ID,
		Candidates: x.Candidates,
	}
	reply, err := callLedgerBy(ctx, storeCtx, run, req)
	if err != nil {
		return res, err
	}
	for _, d := range reply.Decisions {
		res.Memories = append(res.Memories, outcomeOf(d))
	}
	return res, nil
}

// callLedger enqueues a request with the tenant's ledger and waits for its
// reply, matched by request ID.
func callLedger(ctx workflow.Context, req ledger.Request) (ledger.Reply, error) {
	return callLedgerBy(ctx, withStoreOptions(ctx), workflow.ExecuteActivity, req)
}

// callLedgerBy is callLedger enqueueing by run (a regular or a local
// activity) under enqueueCtx's options.
func callLedgerBy(ctx, enqueueCtx workflow.Context, run func(workflow.Context, any, ...any) workflow.Future, req ledger.Request) (ledger.Reply, error) {
	var a *activities.Activities
	var reply ledger.Reply
	if err := run(enqueueCtx, a.EnqueueLedger, req).Get(ctx, nil); err != nil {
		return reply, err
	}
	ch := workflow.GetSignalChannel(ctx, ledger.SignalReply)
	timedOut := false
	timer := workflow.NewTimer(ctx, ledgerReplyTimeout)
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, more bool) { c.Receive(ctx, &reply) })
		sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		sel.Select(ctx)
		if timedOut {
			return reply, temporal.NewApplicationError("the tenant's ledger did not answer in time", "ledger_timeout")
		}
		if reply.RequestID == req.ID {
			break
		}
	}
	if reply.Error != "" {
		return reply, temporal.NewNonRetryableApplicationError(reply.Error, reply.Code, nil)
	}
	return reply, nil
}

func outcomeOf(d memory.Decision) MemoryOutcome {
	o := MemoryOutcome{
		Kind: d.Candidate.Kind, Content: d.Candidate.Content, Verdict: d.Verdict,
		TargetID: d.TargetID, DecisionID: d.ID, Reason: d.Reason,
	}
	// The memory the candidate ended up in: the one the decision created
	// or changed, preferring a live one (a conflict also retires the old).
	for _, m := range d.After {
		if o.MemoryID == "" || m.Status == memory.StatusLive {
			o.MemoryID = m.ID
			if m.Status == memory.StatusLive {
				o.Content = m.Content
				break
			}
		}
	}
	if o.MemoryID == "" {
		o.MemoryID = d.TargetID
	}
	return o
}

// absorbSignals drains buffered signals of one name without blocking.
func absorbSignals(ctx workflow.Context, name string) {
	ch := workflow.GetSignalChannel(ctx, name)
	for ch.ReceiveAsync(nil) {
	}
}
