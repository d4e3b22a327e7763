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
