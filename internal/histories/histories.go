// Package histories records workflow histories from real runs, for the
// replay tests in package workflows: a test that runs a workflow on a real
// Temporal server calls Record, and when HINDSIGHT_RECORD_HISTORIES names
// a directory, the history is written there as JSON (the format the
// Temporal CLI exports and the SDK's replayer reads). Re-record after a
// deliberate workflow change: HINDSIGHT_RECORD_HISTORIES=$PWD/workflows/testdata/histories make test
package histories

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
)

// Env names the directory histories are recorded into.
const Env = "HINDSIGHT_RECORD_HISTORIES"

// Execution names the recorded run; workflows read their own ID (the
// ledger's replies are matched by it), so a replay must use it too.
type Execution struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
}

// Record writes the history of a workflow run to $Env/name.json, and its
// execution to $Env/name.execution.json, when $Env is set; otherwise it
// does nothing. An empty runID means the latest run.
func Record(t *testing.T, c client.Client, workflowID, runID, name string) {
	t.Helper()
	dir := os.Getenv(Env)
	if dir == "" {
		return
	}
	if runID == "" {
		d, err := c.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err != nil {
			t.Fatalf("record history of %s: %v", workflowID, err)
		}
		runID = d.WorkflowExecutionInfo.Execution.RunId
	}
	exec, _ := json.Marshal(Execution{WorkflowID: workflowID, RunID: runID})
	if err := os.WriteFile(filepath.Join(dir, name+".execution.json"), exec, 0o644); err != nil {
		t.Fatal(err)
	}
	it := c.GetWorkflowHistory(context.Background(), workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("record history of %s: %v", workflowID, err)
		}
		h.Events = append(h.Events, ev)
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
