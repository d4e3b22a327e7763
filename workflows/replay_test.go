package workflows_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hindsight-memory/hindsight/internal/histories"
	"github.com/hindsight-memory/hindsight/ledger"
	hworker "github.com/hindsight-memory/hindsight/worker"
	"github.com/hindsight-memory/hindsight/workflows"
)

// TestReplay replays histories recorded from real runs (see
// internal/histories) against the current workflow code: a change that
// would break running workflows (non-determinism) fails here.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".execution.json") })
	want := map[string]bool{"session_end.json": false, "memory_ledger.json": false, "forget.json": false, "consolidate.json": false, "reindex.json": false, "decay.json": false}
	for _, f := range files {
		want[filepath.Base(f)] = true
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: hworker.Interceptors(nil)})
			if err != nil {
				t.Fatal(err)
			}
			r.RegisterWorkflow(workflows.SessionEnd)
			r.RegisterWorkflow(workflows.Forget)
			r.RegisterWorkflow(workflows.Consolidate)
			r.RegisterWorkflow(workflows.Decay)
			r.RegisterWorkflow(workflows.Reindex)
			r.RegisterWorkflowWithOptions(workflows.MemoryLedger, workflow.RegisterOptions{Name: ledger.WorkflowType})
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".execution.json")
			if err != nil {
				t.Fatal(err)
			}
			var exec histories.Execution
			if err := json.Unmarshal(raw, &exec); err != nil {
				t.Fatal(err)
			}
			file, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			h, err := client.HistoryFromJSON(file, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = r.ReplayWorkflowHistoryWithOptions(tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)), h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: exec.WorkflowID, RunID: exec.RunID},
			})
			if err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
	for name, found := range want {
		if !found {
			t.Errorf("no recorded history %s: record it (see internal/histories)", name)
		}
	}
}
