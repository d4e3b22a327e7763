package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/llm"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

// toolError calls a tool that must fail and returns its error text.
func toolError(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s succeeded, want a tool error", name)
	}
	return toolText(res)
}

// storeFact stores a distinct fact and returns the reply.
func storeFact(t *testing.T, s *mcp.ClientSession, i int, requestID string) mcpserver.DecisionOutput {
	t.Helper()
	args := map[string]any{"content": fact(i), "kind": "fact"}
	if requestID != "" {
		args["request_id"] = requestID
	}
	return call[mcpserver.DecisionOutput](t, s, mcpserver.ToolStore, args)
}

// TestNoRequestWedgesTheLedger sends what once broke a tenant for good:
// four memory_feedback calls naming a 1 MiB memory ID, and a
// memory_correct with one. Each is refused, naming the field and the
// limit in a short message; so is the same request sent to the ledger
// directly, past the MCP edge; and the tenant's writes go on, also after
// a restart.
func TestNoRequestWedgesTheLedger(t *testing.T) {
	dir := t.TempDir()
	st := startTestDev(t, dir)
	s := connect(t, st.mcpURL())
	storeFact(t, s, 0, "")
	for _, letter := range "abcd" {
		msg := toolError(t, s, mcpserver.ToolFeedback, map[string]any{"memory_ids": []any{strings.Repeat(string(letter), 1<<20)}, "helped": true})
		if !strings.Contains(msg, "memory_ids[0]") || !strings.Contains(msg, "limit") || len(msg) > 300 {
			t.Fatalf("a 1 MiB memory ID in memory_feedback: %d bytes of error: %.300s", len(msg), msg)
		}
	}
	msg := toolError(t, s, mcpserver.ToolCorrect, map[string]any{"memory_id": strings.Repeat("e", 1<<20), "content": "x"})
	if !strings.Contains(msg, "memory_id") || len(msg) > 300 {
		t.Fatalf("a 1 MiB memory ID in memory_correct: %.300s", msg)
	}
	// Past the edge, the ledger refuses the request itself, before it
	// reaches the ledger's state.
	_, err := service.CallLedger(context.Background(), st.client, "hindsight-e2e", ledger.Request{
		ID: "feedback/huge", Tenant: memory.DefaultTenant, Op: ledger.OpFeedback, MemoryIDs: []string{strings.Repeat("f", 1<<20)}, Helped: true,
	}, time.Minute)
	if !memory.IsInvalid(err) || len(memory.ErrorMessage(err)) > 300 {
		t.Fatalf("a 1 MiB memory ID sent to the ledger directly: %.300v", err)
	}
	storeFact(t, s, 1, "")
	st.Close()

	st = startTestDev(t, dir)
	defer st.Close()
	s = connect(t, st.mcpURL())
	storeFact(t, s, 2, "")
}

// TestRetriesAnswerFromTheLog stores 240 memories one at a time, each
// with a request ID, then retries the 80 oldest at once: every retry is
// answered with its original memory and repeat set, and nothing is stored
// twice. Retries sent to the ledger directly (past the service's look-up
// in the decision log) are answered the same way, and so are retries
// after a restart.
func TestRetriesAnswerFromTheLog(t *testing.T) {
	dir := t.TempDir()
	st := startTestDev(t, dir)
	s := connect(t, st.mcpURL())
	const n, retried = 240, 80
	first := make([]string, n)
	for i := range n {
		first[i] = storeFact(t, s, i, fmt.Sprint("req-", i)).MemoryID
	}
	retry := func(s *mcp.ClientSession) {
		t.Helper()
		var wg sync.WaitGroup
		start := time.Now()
		for i := range retried {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolStore, Arguments: map[string]any{
					"content": fact(i), "kind": "fact", "request_id": fmt.Sprint("req-", i),
				}})
				if err != nil || res.IsError {
					t.Errorf("retry %d: %v %s", i, err, toolText(res))
					return
				}
				out, err := decode[mcpserver.DecisionOutput](res)
				if err != nil {
					t.Errorf("retry %d: %v", i, err)
					return
				}
				if !out.Repeat || out.MemoryID != first[i] {
					t.Errorf("retry %d: memory %s repeat %v, want memory %s as a repeat", i, out.MemoryID, out.Repeat, first[i])
				}
			}()
		}
		wg.Wait()
		t.Logf("%d concurrent retries answered in %v", retried, time.Since(start).Round(time.Millisecond))
	}
	stored := call[service.Stats](t, s, mcpserver.ToolStats, nil)
	t.Logf("%d stores: %d memories, %d live facts", n, stored.Memories, stored.LiveByKind["fact"])
	retry(s)

	// Straight to the ledger, in two batched updates at once, as the
	// service sends them: its window of replies holds the latest 200, so
	// the oldest 40 are applied again and found in the decision log.
	var wg sync.WaitGroup
	for b := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reqs []ledger.Request
			for i := b * retried / 2; i < (b+1)*retried/2; i++ {
				c := memory.Candidate{Kind: memory.KindFact, Content: fact(i), Scope: memory.ScopeShared}
				c.About = llm.About(c.Kind, c.Content)
				reqs = append(reqs, ledger.Request{ID: service.ClientRequestID(ledger.OpStore, memory.DefaultTenant, fmt.Sprint("req-", i)),
					Tenant: memory.DefaultTenant, Op: ledger.OpStore, Candidates: []memory.Candidate{c}})
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			u, err := st.client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: ledger.WorkflowID(memory.DefaultTenant),
				UpdateID: fmt.Sprint("retry-batch-", b), UpdateName: ledger.UpdateApplyBatch, Args: []any{reqs}, WaitForStage: client.WorkflowUpdateStageCompleted})
			var replies []ledger.Reply
			if err == nil {
				err = u.Get(ctx, &replies)
			}
			if err != nil || len(replies) != len(reqs) {
				t.Errorf("batch %d of retries to the ledger: %d replies, %v", b, len(replies), err)
				return
			}
			for i, r := range replies {
				if !r.Repeat || len(r.Decisions) != 1 || r.Decisions[0].ID != reqs[i].MergeDecisionIDs()[0] {
					t.Errorf("retry %s to the ledger: %+v, want its decision as a repeat", reqs[i].ID, r)
				}
			}
		}()
	}
	wg.Wait()
	st.Close()

	st = startTestDev(t, dir)
	defer st.Close()
	s = connect(t, st.mcpURL())
	retry(s)
	after := call[service.Stats](t, s, mcpserver.ToolStats, nil)
	if after.Memories != stored.Memories || after.LiveByKind["fact"] != stored.LiveByKind["fact"] {
		t.Fatalf("the retries changed the memories: %d (%d live facts) before, %d (%d live facts) after",
			stored.Memories, stored.LiveByKind["fact"], after.Memories, after.LiveByKind["fact"])
	}
}

// fact is the i-th of distinct facts, each about its own machine.
func fact(i int) string {
	return fmt.Sprintf("The build machine named %s sits in rack %d.", machineName(i), i)
}

// machineName is a distinct pronounceable name for i.
func machineName(i int) string {
	const syllables = "ka lo mi ne ru sa ti vo ze bu"
	s := strings.Fields(syllables)
	return s[i%10] + s[(i/10)%10] + s[(i/100)%10] + "x"
}

// TestWedgedLedgerIsRepairedAtStart wedges a tenant's ledger as an older
// version could: a run whose workflow task fails on every attempt because
// it would send a payload past Temporal's limit, with merge requests
// signalled to it and never applied. At the next start the ledger is
// ended and started again from the store's state: the memories stored
// before are kept, the signalled merges are applied, and the tenant's
// writes go on. `hindsight ledger repair` then finds nothing to repair.
func TestWedgedLedgerIsRepairedAtStart(t *testing.T) {
	dir := t.TempDir()
	st := startTestDev(t, dir)
	s := connect(t, st.mcpURL())
	before := storeFact(t, s, 0, "")
	ctx := context.Background()
	id := ledger.WorkflowID(memory.DefaultTenant)
	if err := st.client.TerminateWorkflow(ctx, id, "", "the test wedges it"); err != nil {
		t.Fatal(err)
	}

	// The wedged run: a "MemoryLedger" that takes its first request and
	// would continue with a 3 MB state, on a queue of its own.
	const queue = "wedged-ledger"
	w := sdkworker.New(st.client, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, _ ledger.State) error {
		workflow.GetSignalChannel(ctx, ledger.SignalRequest).Receive(ctx, nil)
		return workflow.NewContinueAsNewError(ctx, ledger.WorkflowType, ledger.State{Tenant: memory.DefaultTenant, Unsettled: []string{strings.Repeat("x", 3<<20)}})
	}, workflow.RegisterOptions{Name: ledger.WorkflowType})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	run, err := st.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, ledger.WorkflowType, ledger.State{Tenant: memory.DefaultTenant})
	if err != nil {
		t.Fatal(err)
	}
	wedged := run.GetRunID()
	var merges []ledger.Request
	for i := range 3 {
		req := ledger.Request{ID: fmt.Sprint("merge/wedged-", i), Tenant: memory.DefaultTenant, Op: ledger.OpMerge,
			Candidates: []memory.Candidate{{Kind: memory.KindFact, Content: fmt.Sprintf("Printer %d on floor %d takes A3 paper.", i, i+2), Scope: memory.ScopeShared}}}
		if err := st.client.SignalWorkflow(ctx, id, "", ledger.SignalRequest, req); err != nil {
			t.Fatal(err)
		}
		merges = append(merges, req)
	}
	// Temporal records a workflow task's first failure; the next attempt
	// is scheduled with it.
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for it := st.client.GetWorkflowHistory(waitCtx, id, "", true, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); ; {
		if !it.HasNext() {
			t.Fatal("the wedged run's history ended")
		}
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
			if a.GetCause() != enums.WORKFLOW_TASK_FAILED_CAUSE_PAYLOADS_TOO_LARGE {
				t.Fatalf("the wedged run's task failed for %s", a.GetCause())
			}
			break
		}
	}
	w.Stop()
	st.Close()

	st = startTestDev(t, dir)
	defer st.Close()
	<-st.ledgersRepaired
	d, err := st.client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if run := d.GetWorkflowExecutionInfo().GetExecution().GetRunId(); run == wedged {
		t.Fatalf("the wedged run %s still runs after the start (its task's attempt %d)", run, d.GetPendingWorkflowTask().GetAttempt())
	}
	s = connect(t, st.mcpURL())
	// The ledger applies requests in order: a store sent now is applied
	// after the merges queued again.
	storeFact(t, s, 1, "")
	for _, req := range merges {
		if _, err := st.runtime.Store.Decision(ctx, memory.DefaultTenant, req.MergeDecisionIDs()[0]); err != nil {
			t.Fatalf("the merge %s signalled to the wedged ledger: %v", req.ID, err)
		}
	}
	if h := history(t, s, before.MemoryID); len(h.Versions) == 0 {
		t.Fatalf("the memory stored before the wedge is gone")
	}
	var out strings.Builder
	if err := runLedger(ctx, []string{"repair", "--temporal-addr", st.temporal.FrontendAddr(), "--task-queue", "hindsight-e2e"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not wedged") {
		t.Fatalf("ledger repair on a healthy ledger: %s", out.String())
	}
}
