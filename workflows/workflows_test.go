package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/activities"
	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/workflows"
)

var a *activities.Activities

func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(workflows.SessionEnd)
	env.RegisterWorkflowWithOptions(workflows.MemoryLedger, workflow.RegisterOptions{Name: ledger.WorkflowType})
	env.RegisterActivity(a)
	return env
}

func extraction() memory.Extraction {
	return memory.Extraction{
		Episode: memory.Episode{ID: memory.EpisodeID("acme", "s1"), Tenant: "acme", SessionID: "s1", Task: "import sales.csv",
			Outcome: memory.OutcomeSuccess, Status: memory.EpisodeLive},
		Candidates: []memory.Candidate{
			{Kind: memory.KindLesson, Content: "Read sales.csv with encoding='gbk'"},
			{Kind: memory.KindPreference, Content: "Give report timestamps in UTC"},
		},
		Model: "offline",
	}
}

// onExtract makes a session's extraction answer with fn: in process
// (ExtractInProcess, a local activity, answers itself) or on a worker's
// queue (ExtractInProcess answers Remote, and ExtractEpisode runs).
func onExtract(env *testsuite.TestWorkflowEnvironment, inProcess bool, fn func(context.Context, activities.ExtractInput) (memory.Extraction, error)) {
	if inProcess {
		env.OnActivity(a.ExtractInProcess, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.ExtractInput) (activities.LocalExtraction, error) {
			x, err := fn(ctx, in)
			return activities.LocalExtraction{Extraction: x}, err
		})
		return
	}
	env.OnActivity(a.ExtractInProcess, mock.Anything, mock.Anything).Return(activities.LocalExtraction{Remote: true}, nil).Once()
	env.OnActivity(a.ExtractEpisode, mock.Anything, mock.Anything).Return(fn)
}

var extractors = []struct {
	name      string
	inProcess bool
}{{"in process", true}, {"on a worker's queue", false}}

func TestSessionEndDistilsAndMergesThroughTheLedger(t *testing.T) {
	for _, e := range extractors {
		t.Run(e.name, func(t *testing.T) { testSessionEndDistils(t, e.inProcess) })
	}
}

func testSessionEndDistils(t *testing.T, inProcess bool) {
	env := newEnv(t)
	ref := activities.SessionRef{Tenant: "acme", SessionID: "s1"}
	x := extraction()
	x.Episode.UserID = "u1" // extraction reads whose session it was from the transcript
	x.Candidates[1].About = memory.AboutUser
	var extracted []activities.SessionRef
	onExtract(env, inProcess, func(_ context.Context, in activities.ExtractInput) (memory.Extraction, error) {
		extracted = append(extracted, in.Session)
		return x, nil
	})
	env.OnActivity(a.StoreEpisode, mock.Anything, x.Episode).Return(nil).Once()
	env.OnActivity(a.IndexEpisode, mock.Anything, x.Episode).Return(nil).Once()
	var req ledger.Request
	env.OnActivity(a.EnqueueLedger, mock.Anything, mock.Anything).Return(func(_ context.Context, r ledger.Request) error {
		req = r
		// The ledger answers by signal, as MemoryLedger does.
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(ledger.SignalReply, ledger.Reply{RequestID: "someone else's"})
			env.SignalWorkflow(ledger.SignalReply, ledger.Reply{RequestID: r.ID, Decisions: []memory.Decision{
				{ID: "d1", Candidate: r.Candidates[0], Verdict: memory.VerdictDistinct, After: []memory.Memory{{ID: "m1", Status: memory.StatusLive, Content: r.Candidates[0].Content}}},
				{ID: "d2", Candidate: r.Candidates[1], Verdict: memory.VerdictConflicts, TargetID: "m0", After: []memory.Memory{
					{ID: "m0", Status: memory.StatusSuperseded}, {ID: "m2", Status: memory.StatusLive, Content: r.Candidates[1].Content}}},
			}})
		}, time.Second)
		return nil
	}).Once()

	env.ExecuteWorkflow(workflows.SessionEnd, workflows.SessionEndInput{Tenant: "acme", SessionID: "s1"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed=%v err=%v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if !slices.Equal(extracted, []activities.SessionRef{ref}) {
		t.Fatalf("extracted %v, want the session once", extracted)
	}
	var res workflows.SessionEndResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if req.Op != ledger.OpMerge || req.EpisodeID != x.Episode.ID || len(req.Candidates) != 2 || req.ReplyTo == "" {
		t.Fatalf("ledger request = %+v", req)
	}
	if req.Candidates[0].Scope != memory.SharedScope || req.Candidates[1].Scope != memory.UserScope("u1") {
		t.Fatalf("candidate scopes %q, %q; want the lesson shared and the statement about the user in the episode's user's scope",
			req.Candidates[0].Scope, req.Candidates[1].Scope)
	}
	if res.EpisodeID != x.Episode.ID || len(res.Memories) != 2 || res.Memories[0].MemoryID != "m1" ||
		res.Memories[1].MemoryID != "m2" || res.Memories[1].Verdict != memory.VerdictConflicts {
		t.Fatalf("result = %+v", res)
	}
	env.AssertExpectations(t)
}

func TestSessionEndInvalidInputIsNotRetried(t *testing.T) {
	for _, e := range extractors {
		t.Run(e.name, func(t *testing.T) {
			env := newEnv(t)
			calls := 0
			onExtract(env, e.inProcess, func(_ context.Context, _ activities.ExtractInput) (memory.Extraction, error) {
				calls++
				return memory.Extraction{}, temporal.NewNonRetryableApplicationError("session s1 has no events", memory.EINVALID, nil)
			})
			env.ExecuteWorkflow(workflows.SessionEnd, workflows.SessionEndInput{Tenant: "acme", SessionID: "s1"})
			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != memory.EINVALID {
				t.Fatalf("workflow error = %v, want the EINVALID application error", err)
			}
			if calls != 1 {
				t.Fatalf("extraction ran %d times, want once: invalid input must not be retried", calls)
			}
		})
	}
}

// The short steps run as local activities, which retry as activities do.
func TestSessionEndRetriesTransientFailures(t *testing.T) {
	for _, e := range extractors {
		t.Run(e.name, func(t *testing.T) {
			env := newEnv(t)
			extractions, stores := 0, 0
			x := extraction()
			x.Candidates = nil
			onExtract(env, e.inProcess, func(_ context.Context, _ activities.ExtractInput) (memory.Extraction, error) {
				if extractions++; extractions < 2 {
					return memory.Extraction{}, errors.New("connection reset")
				}
				return x, nil
			})
			env.OnActivity(a.StoreEpisode, mock.Anything, mock.Anything).Return(func(_ context.Context, _ memory.Episode) error {
				if stores++; stores < 3 {
					return errors.New("connection reset")
				}
				return nil
			})
			env.OnActivity(a.IndexEpisode, mock.Anything, mock.Anything).Return(nil)
			env.ExecuteWorkflow(workflows.SessionEnd, workflows.SessionEndInput{Tenant: "acme", SessionID: "s1"})
			if err := env.GetWorkflowError(); err != nil || extractions != 2 || stores != 3 {
				t.Fatalf("err=%v after %d extractions and %d stores, want success on the second and the third", err, extractions, stores)
			}
		})
	}
}

func TestSessionEndRejectsBadTenant(t *testing.T) {
	env := newEnv(t)
	env.ExecuteWorkflow(workflows.SessionEnd, workflows.SessionEndInput{Tenant: "no spaces allowed", SessionID: "s1"})
	var appErr *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != memory.EINVALID {
		t.Fatalf("workflow error = %v, want EINVALID", err)
	}
}

// TestMemoryLedgerAppliesOneRequestAtATime sends the ledger two merge
// requests at once (and the first again), then a third: the requests that
// wait together are merged in one activity, in arrival order, each batch
// only after the previous one was applied; a repeated request ID is
// applied once, and every reply reaches its caller.
func TestMemoryLedgerAppliesOneRequestAtATime(t *testing.T) {
	env := newEnv(t)
	var mu sync.Mutex
	var trace []string
	env.OnActivity(a.MergeRequests, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MergeRequestsInput) ([]ledger.Reply, error) {
		mu.Lock()
		defer mu.Unlock()
		var ids []string
		var replies []ledger.Reply
		for _, r := range in.Requests {
			ids = append(ids, r.ID)
			replies = append(replies, ledger.Reply{RequestID: r.ID, Decisions: []memory.Decision{{ID: "d-" + r.ID, Tenant: r.Tenant, Action: memory.ActionMerge}}})
		}
		trace = append(trace, "merge "+strings.Join(ids, " "))
		return replies, nil
	})
	req := func(id string) ledger.Request {
		return ledger.Request{ID: id, Tenant: "acme", Op: ledger.OpMerge,
			Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: "fact " + id}}}
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(ledger.SignalRequest, req("r1"))
		env.SignalWorkflow(ledger.SignalRequest, req("r2"))
		env.SignalWorkflow(ledger.SignalRequest, req("r1"))
	}, time.Second)
	var updated ledger.Reply
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(ledger.UpdateApply, "u1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("update rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(v any, err error) { updated, _ = v.(ledger.Reply) },
		}, req("r3"))
	}, 2*time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(workflows.MemoryLedger, ledger.State{Tenant: "acme"})

	if got := strings.Fields(strings.ReplaceAll(strings.Join(trace, " "), "merge", "")); !slices.Equal(got, []string{"r1", "r2", "r3"}) {
		t.Fatalf("ledger trace = %v, want r1, r2 and r3 merged once each, in that order", trace)
	}
	if updated.RequestID != "r3" || len(updated.Decisions) != 1 || updated.Decisions[0].ID != "d-r3" {
		t.Fatalf("update reply = %+v", updated)
	}
}

// TestMemoryLedgerMergesWaitingRequestsTogether starts a ledger with merge
// requests waiting (as a burst leaves them, or a continue-as-new), then a
// correction, then another merge: the waiting merges go in one activity,
// in order; the correction after them, alone; the last merge after it.
func TestMemoryLedgerMergesWaitingRequestsTogether(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) { testMergesWaitingRequestsTogether(t, local) })
	}
}

// testMergesWaitingRequestsTogether is the test, with merge batches run as
// local activities or not (activities.MergesInProcess).
func testMergesWaitingRequestsTogether(t *testing.T, local bool) {
	env := newEnv(t)
	env.OnActivity(a.MergesInProcess, mock.Anything).Return(local, nil)
	var trace []string
	traceMerges(env, &trace, "")
	env.OnActivity(a.ApplyChange, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PlanChangeInput) (ledger.Reply, error) {
		trace = append(trace, "change "+in.Request.ID)
		return ledger.Reply{RequestID: in.Request.ID}, nil
	})
	merge := func(id string) ledger.Request {
		return ledger.Request{ID: id, Tenant: "acme", Op: ledger.OpMerge, Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: "fact " + id}}}
	}
	pending := []ledger.Request{merge("m1"), merge("m2"), merge("m3"),
		{ID: "c1", Tenant: "acme", Op: ledger.OpCorrect, MemoryIDs: []string{"mem"}, Outdated: true}, merge("m4")}
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(workflows.MemoryLedger, ledger.State{Tenant: "acme", Pending: pending})
	if want := []string{"merge m1 m2 m3", "change c1", "merge m4"}; !slices.Equal(trace, want) {
		t.Fatalf("ledger trace = %v, want %v", trace, want)
	}
}

// TestMemoryLedgerSettlesFailedMerges fails a merge batch for good: it may
// have logged decisions without storing their versions. The ledger
// settles them (activities.Settle) before its next request, whatever its
// kind; a settle that fails is tried again before the one after, and the
// ledger goes on meanwhile. A ledger that continues as new carries what
// is unsettled and settles it first.
func TestMemoryLedgerSettlesFailedMerges(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) { testSettlesFailedMerges(t, local) })
	}
}

func testSettlesFailedMerges(t *testing.T, local bool) {
	merge := func(id string) ledger.Request {
		return ledger.Request{ID: id, Tenant: "acme", Op: ledger.OpMerge, Candidates: []memory.Candidate{
			{Kind: memory.KindFact, Content: "fact " + id}, {Kind: memory.KindLesson, Content: "lesson " + id}}}
	}
	m1 := merge("m1")
	for _, tc := range []struct {
		name  string
		state ledger.State
		later []ledger.Request // signalled once the queue is empty
		want  []string
	}{
		{"a batch fails", ledger.State{Tenant: "acme", Pending: []ledger.Request{m1,
			{ID: "c1", Tenant: "acme", Op: ledger.OpCorrect, MemoryIDs: []string{"mem"}, Outdated: true}, merge("m2")}}, nil,
			[]string{"merge m1", "settle m1 (fails)", "change c1", "settle m1", "merge m2"}},
		{"carried over", ledger.State{Tenant: "acme", Pending: []ledger.Request{merge("m2")}, Unsettled: m1.MergeDecisionIDs()},
			[]ledger.Request{merge("m3")}, []string{"settle m1 (fails)", "merge m2", "settle m1", "merge m3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.OnActivity(a.MergesInProcess, mock.Anything).Return(local, nil)
			var trace []string
			traceMerges(env, &trace, "m1")
			env.OnActivity(a.ApplyChange, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PlanChangeInput) (ledger.Reply, error) {
				trace = append(trace, "change "+in.Request.ID)
				return ledger.Reply{RequestID: in.Request.ID}, nil
			})
			settles := 0
			env.OnActivity(a.Settle, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SettleInput) error {
				if in.Tenant != "acme" || !slices.Equal(in.DecisionIDs, m1.MergeDecisionIDs()) {
					t.Errorf("Settle(%+v), want m1's decisions %v", in, m1.MergeDecisionIDs())
				}
				if settles++; settles == 1 {
					trace = append(trace, "settle m1 (fails)")
					return temporal.NewNonRetryableApplicationError("the store is still gone", memory.EINTERNAL, nil)
				}
				trace = append(trace, "settle m1")
				return nil
			})
			env.RegisterDelayedCallback(func() {
				for _, req := range tc.later {
					env.SignalWorkflow(ledger.SignalRequest, req)
				}
			}, time.Second)
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
			env.ExecuteWorkflow(workflows.MemoryLedger, tc.state)
			if !slices.Equal(trace, tc.want) {
				t.Fatalf("ledger trace = %v, want %v", trace, tc.want)
			}
		})
	}
}

// traceMerges answers MergeRequests with an empty reply per request,
// tracing each batch as "merge ID ID..."; a batch with the request failing
// (if not "") fails for good.
func traceMerges(env *testsuite.TestWorkflowEnvironment, trace *[]string, failing string) {
	env.OnActivity(a.MergeRequests, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MergeRequestsInput) ([]ledger.Reply, error) {
		var ids []string
		var replies []ledger.Reply
		for _, r := range in.Requests {
			ids = append(ids, r.ID)
			replies = append(replies, ledger.Reply{RequestID: r.ID})
		}
		*trace = append(*trace, "merge "+strings.Join(ids, " "))
		if failing != "" && slices.Contains(ids, failing) {
			return nil, temporal.NewNonRetryableApplicationError("the store is gone", memory.EINTERNAL, nil)
		}
		return replies, nil
	})
}

func TestMemoryLedgerRejectsAnotherTenantsUpdate(t *testing.T) {
	env := newEnv(t)
	var rejected error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(ledger.UpdateApply, "u1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { rejected = err },
			OnAccept:   func() { t.Error("an update for another tenant was accepted") },
			OnComplete: func(any, error) {},
		}, ledger.Request{ID: "x", Tenant: "other", Op: ledger.OpDecay})
	}, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(workflows.MemoryLedger, ledger.State{Tenant: "acme"})
	if rejected == nil {
		t.Fatal("the ledger accepted a request for another tenant")
	}
}

// TestMemoryLedgerKeepsRequestsThatArriveAsItHandsOver fills a ledger run
// to its continue-as-new, with its replies slow to deliver, and signals a
// request while the run waits for them: the request is merged in this run
// or carried to the next, never dropped with the run.
func TestMemoryLedgerKeepsRequestsThatArriveAsItHandsOver(t *testing.T) {
	env := newEnv(t)
	var merged []string
	env.OnActivity(a.MergeRequests, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MergeRequestsInput) ([]ledger.Reply, error) {
		var replies []ledger.Reply
		for _, r := range in.Requests {
			merged = append(merged, r.ID)
			replies = append(replies, ledger.Reply{RequestID: r.ID})
		}
		return replies, nil
	})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, ledger.SignalReply, mock.Anything).Return(nil).After(time.Minute)
	req := func(id string) ledger.Request {
		return ledger.Request{ID: id, Tenant: "acme", Op: ledger.OpMerge, ReplyTo: "session/" + id,
			Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: "fact " + id}}}
	}
	var pending []ledger.Request
	for i := range 100 { // a run's worth
		pending = append(pending, req(fmt.Sprintf("r%03d", i)))
	}
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(ledger.SignalRequest, req("late")) }, 10*time.Second)
	env.ExecuteWorkflow(workflows.MemoryLedger, ledger.State{Tenant: "acme", Pending: pending})

	var next *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &next) {
		t.Fatalf("the full run ended with %v, want a continue-as-new", err)
	}
	if !slices.Contains(merged, "r099") {
		t.Fatalf("the run merged %d requests, not the 100 it began with", len(merged))
	}
	var carried ledger.State
	if err := converter.GetDefaultDataConverter().FromPayloads(next.Input, &carried); err != nil {
		t.Fatal(err)
	}
	carriedLate := slices.ContainsFunc(carried.Pending, func(r ledger.Request) bool { return r.ID == "late" })
	if carriedLate == slices.Contains(merged, "late") {
		t.Fatalf("the request signalled while the run delivered its replies was merged: %v, carried: %v; want exactly one",
			slices.Contains(merged, "late"), carriedLate)
	}
}

// TestMemoryLedgerAnswersRetriesPastItsWindow retries, in three batched
// updates at once, the 80 oldest of 240 requests a ledger applied: the
// oldest 40 have left its window of recent replies, the next 40 have not.
// Applying the first 40 again pushes the others out of the window while
// their updates wait; every retry is still answered, with its original
// decision and as a repeat (the activities find the evicted ones in the
// decision log).
func TestMemoryLedgerAnswersRetriesPastItsWindow(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(a.MergesInProcess, mock.Anything).Return(true, nil)
	id := func(i int) string { return fmt.Sprintf("store/r%03d", i) }
	decision := func(req string) string { return "dec-" + req }
	applied := map[string]bool{}
	for i := range 240 {
		applied[id(i)] = true
	}
	env.OnActivity(a.MergeRequests, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MergeRequestsInput) ([]ledger.Reply, error) {
		var replies []ledger.Reply
		for _, r := range in.Requests {
			replies = append(replies, ledger.Reply{RequestID: r.ID, Repeat: applied[r.ID],
				Decisions: []memory.Decision{{ID: decision(r.ID), Tenant: "acme", Action: memory.ActionMerge}}})
			applied[r.ID] = true
		}
		return replies, nil
	})
	// The window holds the latest 200 replies: requests 40 to 239.
	st := ledger.State{Tenant: "acme"}
	for i := 40; i < 240; i++ {
		st.Carried = append(st.Carried, ledger.CarriedReply{RequestID: id(i), DecisionIDs: []string{decision(id(i))}})
	}
	req := func(i int) ledger.Request {
		return ledger.Request{ID: id(i), Tenant: "acme", Op: ledger.OpStore,
			Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: fmt.Sprint("fact ", i)}}}
	}
	var mu sync.Mutex
	answered := map[string]ledger.Reply{}
	env.RegisterDelayedCallback(func() {
		for b, batch := range [][2]int{{0, 32}, {32, 64}, {64, 80}} {
			var reqs []ledger.Request
			for i := batch[0]; i < batch[1]; i++ {
				reqs = append(reqs, req(i))
			}
			env.UpdateWorkflow(ledger.UpdateApplyBatch, fmt.Sprint("retry-", b), &testsuite.TestUpdateCallback{
				OnReject: func(err error) { t.Errorf("batch %d rejected: %v", b, err) },
				OnAccept: func() {},
				OnComplete: func(v any, err error) {
					if err != nil {
						t.Errorf("batch %d: %v", b, err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					for _, r := range v.([]ledger.Reply) {
						answered[r.RequestID] = r
					}
				},
			}, reqs)
		}
	}, time.Second)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(workflows.MemoryLedger, st)
	if len(answered) != 80 {
		t.Fatalf("%d of 80 retries answered", len(answered))
	}
	for i := range 80 {
		r := answered[id(i)]
		if !r.Repeat || len(r.Decisions) != 1 || r.Decisions[0].ID != decision(id(i)) {
			t.Errorf("retry of %s answered %+v, want its decision %s as a repeat", id(i), r, decision(id(i)))
		}
	}
}
