package main

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/enums/v1"

	"github.com/hindsight-memory/hindsight/ledger"
	"github.com/hindsight-memory/hindsight/mcpserver"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
)

// TestStoreBurst sends 60 memory_store calls at once: every one succeeds,
// and they reach the tenant's ledger in fewer, batched updates (so that a
// burst never meets Temporal's limit of 10 updates in flight per
// workflow).
func TestStoreBurst(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	const n = 60
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolStore, Arguments: map[string]any{
				"content": fmt.Sprintf("Build agent %d runs on rack R%d with %d GB of memory.", i, i*7%13, 8+i), "kind": "fact",
			}})
			switch {
			case err != nil:
				errs <- err
			case res.IsError:
				errs <- fmt.Errorf("store %d: %s", i, toolText(res))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	updates := 0
	it := st.client.GetWorkflowHistory(context.Background(), ledger.WorkflowID(memory.DefaultTenant), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			updates++
		}
	}
	if updates == 0 || updates >= n {
		t.Fatalf("%d stores reached the ledger in %d updates, want fewer, batched", n, updates)
	}
	t.Logf("%d stores in %d updates", n, updates)
}

// TestStoreReachesAnEndedLedger stores three memories: the first starts
// the tenant's ledger, the second reaches it running, and the third, sent
// after an operator terminated it, starts it again. Every store is
// answered and kept.
func TestStoreReachesAnEndedLedger(t *testing.T) {
	st := startTestDev(t, t.TempDir())
	defer st.Close()
	s := connect(t, st.mcpURL())
	ctx := context.Background()
	store := func(i int) mcpserver.DecisionOutput {
		t.Helper()
		return call[mcpserver.DecisionOutput](t, s, mcpserver.ToolStore, map[string]any{
			"content": fmt.Sprintf("Deploy window %d opens at %02d:00 UTC on Tuesdays.", i, 8+i), "kind": "fact",
		})
	}
	runOf := func() (string, enums.WorkflowExecutionStatus) {
		t.Helper()
		d, err := st.client.DescribeWorkflowExecution(ctx, ledger.WorkflowID(memory.DefaultTenant), "")
		if err != nil {
			t.Fatal(err)
		}
		info := d.GetWorkflowExecutionInfo()
		return info.GetExecution().GetRunId(), info.GetStatus()
	}
	ids := []string{store(0).MemoryID, store(1).MemoryID}
	first, _ := runOf()
	if err := st.client.TerminateWorkflow(ctx, ledger.WorkflowID(memory.DefaultTenant), "", "test: the ledger ended"); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, store(2).MemoryID)
	run, status := runOf()
	if run == first || status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("after the terminated run %s, the ledger is run %s (%v), want a new running one", first, run, status)
	}
	for i, id := range ids {
		if id == "" {
			t.Fatalf("store %d named no memory", i)
		}
		got := call[service.History](t, s, mcpserver.ToolHistory, map[string]any{"memory_id": id})
		if len(got.Versions) == 0 || len(got.Decisions) == 0 {
			t.Fatalf("memory %s of store %d has %d versions and %d decisions, want its version and decision kept", id, i, len(got.Versions), len(got.Decisions))
		}
	}
}
