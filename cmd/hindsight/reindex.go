package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/workflows"
)

func runReindex(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("reindex", "[flags]", `
Re-embed every memory and episode from the store into the vector index
generation of the workers' embedder, then switch recall over to it. Workers
start this by themselves when their embedding model or dimension changes;
run it by hand to rebuild the index from the store. Recall keeps working
from the current generation until the switch.`, "TEMPORAL_ADDR", "TEMPORAL_NAMESPACE", "HINDSIGHT_TASK_QUEUE")
	var s stackFlags
	var t temporalFlags
	s.register(fs)
	t.register(fs)
	wait := fs.Duration("wait", 30*time.Minute, "wait this long for the report (0: start and return)")
	if err := parse(fs, args); err != nil {
		return err
	}
	tc, err := t.dial(&s)
	if err != nil {
		return err
	}
	defer tc.Close()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "reindex/manual-" + time.Now().UTC().Format("20060102T150405"), TaskQueue: s.taskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.Reindex, workflows.ReindexInput{})
	if err != nil {
		return fmt.Errorf("start reindex: %w", err)
	}
	fmt.Fprintf(out, "reindex started (workflow %s)\n", run.GetID())
	if *wait == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	var rep workflows.ReindexReport
	if err := run.Get(wctx, &rep); err != nil {
		return err
	}
	fmt.Fprintf(out, "generation %s: %d tenants, %d documents embedded, %d removed, %d caught up\n", rep.Generation, rep.Tenants, rep.Reindexed, rep.Removed, rep.CaughtUp)
	return nil
}
